// TaskRecords: the task store plus its announcements. Every change to a task record goes through
// write(), which never changes a terminal record and publishes each real change on the TaskBus
// (so subscriptions/listen streams on any instance follow it). A store that fails or does not
// answer in time makes the operation fail with -32603 store_unavailable (HTTP 503), naming why.
// Every store operation, its time and failure, every task created and every task that reached a
// terminal status here is told to the observer (the metrics). With tracing on, each store
// operation is a span, a task's record keeps the trace of the request that created it, each change
// of status is a phase span of that trace, and a request that reads a task links to it.

import type { TaskBus } from "../cluster/taskBus.js";
import { linkToTask, recordTaskPhase, type TaskPhase, taskOriginHere } from "../observability/taskTrace.js";
import { inSpan, tracingOn } from "../observability/tracing.js";
import { internalError, RpcError, storeUnavailable } from "../protocol/errors.js";
import { type JsonRpcErrorObject, TERMINAL_STATUSES } from "../protocol/wire.js";
import { startHistory, withHistory } from "./taskHistory.js";
import type { TaskRecord } from "./taskRecord.js";
import type { TaskStore } from "./taskStore.js";

/** Told of every change this instance wrote (not of those coming from others): webhooks go out once, from here. */
export type TaskTransition = (record: TaskRecord, before: TaskRecord) => void;

export type StoreOperation = "create" | "get" | "update" | "list_unfinished";

export interface TaskRecordsObserver {
  storeOperation(operation: StoreOperation, seconds: number, failed: boolean): void;
  taskCreated(): void;
  /** A write moved a task to this terminal status. */
  taskFinished(status: string): void;
}

const unobserved: TaskRecordsObserver = { storeOperation() {}, taskCreated() {}, taskFinished() {} };

export class TaskRecords {
  constructor(
    private readonly store: TaskStore,
    private readonly bus: TaskBus<TaskRecord>,
    private readonly observer: TaskRecordsObserver = unobserved,
    private readonly transitions: readonly TaskTransition[] = [],
  ) {}

  async create(record: TaskRecord): Promise<void> {
    const origin = taskOriginHere();
    const traced = startHistory(origin ? { ...record, trace: origin } : record);
    await this.guard("create", () => this.store.create(traced));
    this.observer.taskCreated();
    recordTaskPhase(origin, "created", record.taskId, record.tool);
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const record = await this.guard("get", () => this.store.get(taskId));
    if (record?.trace) linkToTask(record.trace, taskId);
    return record;
  }

  listUnfinished(): Promise<TaskRecord[]> {
    return this.guard("list_unfinished", () => this.store.listUnfinished());
  }

  /** Changes a task that is not yet terminal and announces it; the new record, or undefined if nothing changed. */
  async write(taskId: string, mutate: (current: TaskRecord) => TaskRecord | undefined): Promise<TaskRecord | undefined> {
    let changed = false;
    let before: TaskRecord | undefined;
    const updated = await this.guard("update", () =>
      this.store.update(taskId, (current) => {
        const mutated = TERMINAL_STATUSES.has(current.status) ? undefined : mutate(current);
        const next = mutated === undefined ? undefined : withHistory(current, mutated);
        changed = next !== undefined;
        before = current;
        return next;
      }),
    );
    if (!updated || !changed) return undefined;
    if (TERMINAL_STATUSES.has(updated.status)) this.observer.taskFinished(updated.status);
    if (updated.trace && updated.status !== before?.status) recordTaskPhase(updated.trace, phaseOf(updated.status), taskId, updated.tool);
    if (before === undefined) return updated;
    this.bus.publish(updated);
    for (const told of this.transitions) told(updated, before);
    return updated;
  }

  /** Runs one store operation, timed; a store failure is named for the client (errors we raise ourselves pass unchanged). */
  private guard<T>(operation: StoreOperation, run: () => Promise<T>): Promise<T> {
    // Off: no span, so no name, attributes or closure made for one.
    if (!tracingOn()) return this.timed(operation, run);
    return inSpan(`task_store ${operation}`, { "db.operation.name": operation }, () => this.timed(operation, run));
  }

  private async timed<T>(operation: StoreOperation, run: () => Promise<T>): Promise<T> {
    const started = performance.now();
    let failed = false;
    try {
      return await run();
    } catch (error) {
      if (error instanceof RpcError) throw error;
      failed = true;
      const why = error instanceof Error ? error.message : String(error);
      // The stores name themselves ("task store (redis …) did not answer …"); others get a prefix.
      const cause = /^task store\b/i.test(why) ? why.replace(/^task store\s*/i, "") : why;
      throw storeUnavailable(cause);
    } finally {
      this.observer.storeOperation(operation, (performance.now() - started) / 1000, failed);
    }
  }
}

const now = () => new Date().toISOString();

/** The phase a task entered with this status (input_required back to working: answered). */
function phaseOf(status: TaskRecord["status"]): TaskPhase {
  return status === "working" ? "answered" : status;
}

/** The record without open questions (any status but input_required). */
export function withoutInputs(record: TaskRecord): TaskRecord {
  const { inputRequests: _gone, ...rest } = record;
  return rest;
}

/**
 * The task ended by a JSON-RPC error (by default -32603 with `message`), which it carries; one whose
 * cancel was recorded ends cancelled instead, the failure named in its statusMessage (decision 0028).
 */
export function failedRecord(
  current: TaskRecord,
  message: string,
  error: JsonRpcErrorObject = internalError(message).toJSON(),
): TaskRecord {
  if (current.cancelRequestedAt !== undefined)
    return cancelledRecord(current, `Cancelled by the client (its call ended meanwhile: ${message})`);
  return withoutInputs({ ...current, status: "failed", statusMessage: message, error, lastUpdatedAt: now() });
}

/** A client's tasks/cancel, recorded before it is carried out (the first time counts). */
export function cancelRequested(current: TaskRecord): TaskRecord {
  return { ...current, cancelRequestedAt: current.cancelRequestedAt ?? now() };
}

export function cancelledRecord(current: TaskRecord, statusMessage: string): TaskRecord {
  return withoutInputs({ ...current, status: "cancelled", statusMessage, lastUpdatedAt: now() });
}
