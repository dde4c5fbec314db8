// TaskAccess: what a caller may do with a task, on any instance. A task belongs to the identity
// that created it; for anyone else it does not exist (the same -32602 as an unknown or expired id).
// tasks/get reads the shared store; answers and cancels go to the task's holder — this instance's
// TaskRunner, or another instance's through the HolderLink. A task whose holder instance is gone
// (its lease expired) is failed by whoever looks at it; a holder that only does not answer is not
// taken for gone while its lease lives.
// In a fleet, each endpoint has its own TaskAccess scoped to it: a task answers only on the
// endpoint that created it (`TaskRecord.endpoint`); anywhere else it is unknown, like another's.

import type { Logger } from "pino";
import { HOLDER_SILENCE_MS, type HolderLink, type HolderReply, type TaskCommand } from "../cluster/holderLink.js";
import type { InstanceLeases } from "../cluster/instanceLeases.js";
import type { EventLog } from "../observability/requestLog.js";
import { holderFailed, holderUnresponsive, invalidParams, leaseUnreadable, RpcError } from "../protocol/errors.js";
import { SHUTDOWN } from "../protocol/reasons.js";
import { type JsonObject, TERMINAL_STATUSES } from "../protocol/wire.js";
import type { TaskRecord } from "./taskRecord.js";
import { cancelledRecord, cancelRequested, failedRecord, type TaskRecords } from "./taskRecords.js";
import type { TaskRunner } from "./taskRunner.js";

/** What access needs of the tasks held here: a runner, or (a federated endpoint) whichever backend's runner holds the task. */
export type TaskHolder = Pick<TaskRunner, "answer" | "cancel" | "fail" | "cancelArrives">;

/** A holder over several runners (a fleet's backends, the inventory's parts): each command goes to `runnerOf(taskId)`,
 *  the runner holding the task (none: nothing to do). */
export function holderOver(runnerOf: (taskId: string) => TaskHolder | undefined): TaskHolder {
  return {
    answer: (taskId, responses, requestLog) => runnerOf(taskId)?.answer(taskId, responses, requestLog) ?? Promise.resolve(),
    cancel: (taskId, requestLog) => runnerOf(taskId)?.cancel(taskId, requestLog) ?? Promise.resolve(),
    fail: (taskId, reason, requestLog) => runnerOf(taskId)?.fail(taskId, reason, requestLog) ?? Promise.resolve(),
    cancelArrives: (taskId, ownerHash) => runnerOf(taskId)?.cancelArrives(taskId, ownerHash),
  };
}

export interface TaskAccessOptions {
  records: TaskRecords;
  runner: TaskHolder;
  /** The endpoint this access serves, in a fleet; unset: the single upstream's (records without an endpoint). */
  endpoint?: string | undefined;
  /** Serves tasks of every endpoint (the inventory, at the root of a fleet): `endpoint` is not checked. */
  anyEndpoint?: boolean | undefined;
  instanceId: string;
  leases: InstanceLeases;
  link: HolderLink;
  log: Logger;
}

/** How a command is named to the client whose request it carries. */
const COMMAND_NAMES: Record<TaskCommand["kind"], string> = { update: "tasks/update", cancel: "tasks/cancel", fail: "an operator's fail" };

const notFound = () => invalidParams("Task not found (unknown, expired, or not yours)");

export class TaskAccess {
  constructor(private readonly options: TaskAccessOptions) {}

  /** The caller's task as stored now (failed first if its holder is gone). */
  async get(ownerHash: string, taskId: string): Promise<TaskRecord> {
    const record = await this.owned(ownerHash, taskId);
    return (await this.failIfHolderGone(record)) ?? record;
  }

  /** Delivers answers; answered keys are gone from the store before this resolves. `log`: the request's. */
  async update(ownerHash: string, taskId: string, responses: JsonObject, log?: EventLog): Promise<void> {
    const record = await this.owned(ownerHash, taskId);
    if (record.holder !== this.options.instanceId && !TERMINAL_STATUSES.has(record.status)) {
      return this.viaHolder(record, { kind: "update", taskId, ownerHash, responses });
    }
    await this.options.runner.answer(taskId, responses, log);
  }

  /**
   * Always acknowledges for the owner; a running task stops upstream and ends cancelled. A cancel for
   * another instance is recorded first, so a failure any instance writes after it (a frozen holder's
   * call failing as it wakes, say) ends the task cancelled too (decision 0028); held here, the one
   * write that ends it cancelled orders it against the call's own end the same way. `log`: the request's.
   */
  async cancel(ownerHash: string, taskId: string, log?: EventLog): Promise<void> {
    this.options.runner.cancelArrives(taskId, ownerHash); // before any await: a failure written here from now on loses
    const found = await this.owned(ownerHash, taskId);
    if (TERMINAL_STATUSES.has(found.status)) return;
    if (found.holder === this.options.instanceId) return this.options.runner.cancel(taskId, log);
    const record = await this.options.records.write(taskId, cancelRequested);
    if (!record) return; // it ended before the cancel was recorded: it stays as it ended
    await this.viaHolder(record, { kind: "cancel", taskId, ownerHash });
  }

  /** An operator fails the task with `reason` (the caller checked the role; ownerHash is the task's owner). */
  async fail(ownerHash: string, taskId: string, reason: string, log?: EventLog): Promise<void> {
    const record = await this.owned(ownerHash, taskId);
    if (TERMINAL_STATUSES.has(record.status)) return;
    if (record.holder !== this.options.instanceId) return this.viaHolder(record, { kind: "fail", taskId, ownerHash, reason });
    await this.options.runner.fail(taskId, reason, log);
  }

  /** For followers (listen streams): fails the task now if its holder instance is gone. */
  async checkHolder(taskId: string): Promise<void> {
    const record = await this.options.records.get(taskId);
    if (record) await this.failIfHolderGone(record);
  }

  /** The caller's record, on this endpoint. `anyEndpoint`: a holder serving another instance, which checked the endpoint. */
  private async owned(ownerHash: string, taskId: string, anyEndpoint = false): Promise<TaskRecord> {
    const record = await this.options.records.get(taskId);
    if (!record || record.ownerHash !== ownerHash) throw notFound();
    if (!anyEndpoint && !this.options.anyEndpoint && record.endpoint !== this.options.endpoint) throw notFound();
    return record;
  }

  /** The failed record when the task was running on an instance that is gone; else undefined. */
  private async failIfHolderGone(record: TaskRecord): Promise<TaskRecord | undefined> {
    if (TERMINAL_STATUSES.has(record.status) || record.holder === this.options.instanceId) return undefined;
    if (await this.holderAlive(record.holder)) return undefined;
    return this.failHolderGone(record.taskId);
  }

  /** The leases live in the cluster's store (Redis or PostgreSQL): a look-up that fails is the store's trouble, named so. */
  private async holderAlive(holder: string): Promise<boolean> {
    try {
      return await this.options.leases.isAlive(holder);
    } catch (error) {
      throw leaseUnreadable(holder, "the task", error);
    }
  }

  /**
   * Another instance holds the call: it delivers the command. If it says nothing (frozen, or the
   * message was lost), a cancel or an operator's fail is still written — that end is what was asked
   * for, and a holder that comes back lets go of a task ended meanwhile (TaskRunner's sweep). An
   * answer is not: while the holder's lease lives the task goes on, and the client is told to read
   * it and try again (503); only a holder whose lease is gone has its task failed.
   */
  private async viaHolder(record: TaskRecord, command: TaskCommand): Promise<void> {
    const reply = await this.options.link.send(record.holder, command);
    if (reply) {
      if (!reply.ok) throw RpcError.from(reply.error, reply.httpStatus);
      return;
    }
    const { taskId } = record;
    if (command.kind === "cancel") {
      const why = "Cancelled by the client (the taskgate instance holding it did not answer; its upstream call is stopped)";
      const updated = await this.options.records.write(taskId, (current) => cancelledRecord(current, why));
      if (updated) this.options.log.warn({ event: "task.cancelled", taskId, why: "holder gone" }, "task cancelled without its holder");
      return;
    }
    if (command.kind === "fail") {
      const updated = await this.options.records.write(taskId, (current) => failedRecord(current, command.reason));
      if (updated)
        this.options.log.warn({ event: "task.failed_by_operator", taskId, why: "holder gone" }, "task failed without its holder");
      return;
    }
    if (await this.holderAlive(record.holder)) throw holderUnresponsive(taskId, COMMAND_NAMES[command.kind], HOLDER_SILENCE_MS);
    await this.failHolderGone(taskId);
  }

  /** A command from another instance for a task this one holds (owner checked again here). */
  async onCommand(command: TaskCommand): Promise<HolderReply> {
    try {
      const record = await this.owned(command.ownerHash, command.taskId, true);
      if (record.holder !== this.options.instanceId) throw notFound();
      if (command.kind === "update") await this.options.runner.answer(command.taskId, command.responses);
      else if (command.kind === "fail") await this.options.runner.fail(command.taskId, command.reason);
      else await this.options.runner.cancel(command.taskId);
      return { ok: true };
    } catch (error) {
      // Our own errors keep their reason; anything else is named, so the caller's client is told what failed where.
      const cause = error instanceof Error ? error.message : String(error);
      const rpc = error instanceof RpcError ? error : holderFailed(command.taskId, COMMAND_NAMES[command.kind], cause);
      if (!(error instanceof RpcError)) {
        this.options.log.error(
          { event: "task.command.failed", taskId: command.taskId, command: command.kind, err: cause },
          "holder command failed",
        );
      }
      return { ok: false, error: rpc.toJSON(), ...(rpc.httpStatus !== 200 ? { httpStatus: rpc.httpStatus } : {}) };
    }
  }

  /** The instance holding this task is gone: its upstream call went with it. */
  private async failHolderGone(taskId: string): Promise<TaskRecord | undefined> {
    const updated = await this.options.records.write(taskId, (current) => failedRecord(current, SHUTDOWN.holderGone));
    if (updated) this.options.log.warn({ event: "task.orphaned", taskId, why: "holder gone" }, "task failed: its holder instance is gone");
    return updated;
  }
}
