// TaskRunner: the life of the tasks whose upstream call this instance hosts ("live tasks").
// start() writes the record (durably, before the handle goes out) and then mirrors the call into
// it, one write at a time in the order the call produced them: progress (or the upstream task's
// own status) → statusMessage, open questions → input_required + inputRequests, the outcome →
// completed / failed / cancelled.
// answer() and cancel() act on a live task for its holder (the owner was checked by TaskAccess).
// A task whose ttl runs out stops its call; shutdown() and failOrphans() fail what can never finish.
// A live task another instance ended meanwhile (it failed the task while this one looked gone:
// frozen past its lease, or slow to answer) is let go every sweepMs, its upstream call stopped.
// The writes a task cannot do without — its questions and its outcome — are retried while the
// store is unavailable (until the task's ttl), or a restarted Redis would leave it `working` for good.

import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { EventLog } from "../observability/requestLog.js";
import { invalidParams, RpcError } from "../protocol/errors.js";
import { shouldRelayLog } from "../protocol/logLevels.js";
import { SHUTDOWN } from "../protocol/reasons.js";
import { type InputRequests, type JsonObject, type JsonRpcErrorObject, TERMINAL_STATUSES } from "../protocol/wire.js";
import { type MatchResult, OpenQuestions } from "../questions/openQuestions.js";
import type { LogEntry } from "../upstream/callContext.js";
import type { CallOutcome, RunningCall } from "../upstream/upstreamCall.js";
import { modernResult } from "../upstream/upstreamResult.js";
import { isObject } from "../util/json.js";
import { MAX_TIMER_MS } from "../util/timers.js";
import type { TaskRecord } from "./taskRecord.js";
import { cancelledRecord, cancelRequested, failedRecord, type TaskRecords, withoutInputs } from "./taskRecords.js";

/** 160 random bits, base64url: unguessable and header-safe. */
export const newTaskId = () => randomBytes(20).toString("base64url");

export interface TaskRunnerOptions {
  records: TaskRecords;
  /** This instance: the holder written into every record it starts. */
  instanceId: string;
  settings: {
    ttlMs: number;
    pollIntervalMs: number;
    /** Per tool, the inputRequests key its questions get. */
    inputKeys: Record<string, string>;
  };
  log: Logger;
  /** The backend of a fleet whose calls this runner hosts: written into every record it starts. */
  backend?: string | undefined;
  /** How often live tasks are checked for having been ended by another instance (unset: never). */
  sweepMs?: number | undefined;
}

/** Why live tasks end early: the upstream call's abort reason, the record's statusMessage and error. */
export interface TaskEnding {
  abortReason: string;
  message: string;
  error?: JsonRpcErrorObject;
}

/** A task whose upstream call this instance hosts. */
interface LiveTask {
  call: RunningCall;
  ownerHash: string;
  /** A tasks/cancel of its owner reached this instance (cancelArrives): a failure written here ends it cancelled. */
  cancelArrived?: boolean;
  questions: OpenQuestions;
  /** Serialises this task's writes in the order the call produced them. */
  chain: Promise<unknown>;
  /** Told when the task is let go (its end recorded, or it ended elsewhere): answers waiting for the call's end. */
  onRelease?: Array<() => void>;
  expiry?: NodeJS.Timeout;
}

const now = () => new Date().toISOString();

/** `current` with the cancel recorded when one reached this instance for the live task (failedRecord then ends it cancelled). */
const withArrivedCancel = (current: TaskRecord, task: LiveTask | undefined): TaskRecord =>
  task?.cancelArrived ? cancelRequested(current) : current;

export class TaskRunner {
  private readonly live = new Map<string, LiveTask>();
  private readonly sweeper: NodeJS.Timeout | undefined;
  /** Shut down: store writes are no longer retried. */
  private stopped = false;

  constructor(private readonly options: TaskRunnerOptions) {
    if (options.sweepMs !== undefined) {
      this.sweeper = setInterval(() => void this.releaseEndedElsewhere(), options.sweepMs);
      this.sweeper.unref();
    }
  }

  /**
   * Lets go of the live tasks whose record is terminal although this instance still runs their
   * call: another instance failed them while this one looked gone. Their calls are stopped
   * upstream — else one waiting for an answer nobody can send any more would wait for ever.
   * A store that does not answer now is asked again at the next sweep.
   */
  async releaseEndedElsewhere(): Promise<number> {
    let released = 0;
    for (const taskId of [...this.live.keys()]) {
      const record = await this.options.records.get(taskId).catch(() => undefined);
      if (!record || !TERMINAL_STATUSES.has(record.status)) continue;
      const task = this.release(taskId);
      if (!task) continue;
      task.call.abort(`task ended elsewhere (${record.status})`);
      released += 1;
      this.options.log.warn(
        { event: "task.released", taskId, status: record.status },
        "task ended by another instance while its call ran here: the upstream call is stopped",
      );
    }
    return released;
  }

  /**
   * Creates the task record (durably, before returning) and binds the running call to it.
   * `requestLog`: the log of the request that creates the task; the task's own lines carry its taskId.
   * `endpoint`: the MCP path of a fleet the request came to (the task answers only there).
   * `ownerName`: how operators see the owner (the request's loggable subject).
   */
  async start(
    call: RunningCall,
    ownerHash: string,
    tool: string,
    requestLog: EventLog = this.options.log,
    endpoint?: string,
    ownerName?: string,
  ): Promise<TaskRecord> {
    const { records, settings, log } = this.options;
    const created = now();
    const record: TaskRecord = {
      taskId: newTaskId(),
      status: "working",
      createdAt: created,
      lastUpdatedAt: created,
      ttlMs: settings.ttlMs,
      pollIntervalMs: settings.pollIntervalMs,
      ownerHash,
      ...(ownerName !== undefined ? { ownerName } : {}),
      tool,
      ...(this.options.backend !== undefined ? { backend: this.options.backend } : {}),
      ...(endpoint !== undefined ? { endpoint } : {}),
      holder: this.options.instanceId,
      version: 0,
    };
    await records.create(record);
    const { taskId } = record;
    const task: LiveTask = {
      call,
      ownerHash,
      questions: new OpenQuestions(settings.inputKeys[tool], () =>
        this.inBackground(taskId, task, () => this.mirror(taskId, task.questions.inputRequests())),
      ),
      chain: Promise.resolve(),
    };
    this.live.set(taskId, task);
    call.logTo(log, { taskId });
    requestLog.info({ event: "task.created", taskId, tool }, "task created");

    call.watch({
      progress: (p) => this.inBackground(taskId, task, () => this.writeProgress(taskId, p.message ?? progressText(p))),
      // A 2025-11-25 upstream task's own statusMessage.
      status: (message) => this.inBackground(taskId, task, () => this.writeProgress(taskId, message.slice(0, 500))),
      // Tasks carry no log messages (2026-07-28): an informative one becomes the statusMessage.
      log: (entry) => {
        const text = statusTextOf(entry);
        if (text !== undefined) this.inBackground(taskId, task, () => this.writeProgress(taskId, text));
      },
      question: (question) =>
        this.inBackground(taskId, task, async () => {
          if (question.settled) return;
          const key = task.questions.add(question);
          await this.stored(taskId, () => this.mirror(taskId, task.questions.inputRequests()));
          log.info({ event: "task.input_required", taskId, key, kind: question.request.method }, "task waits for input");
        }),
    });
    void call.outcome.then((outcome) => this.inBackground(taskId, task, () => this.finish(taskId, outcome)));
    // Past setTimeout's ceiling (~24.8 days) Node would fire at once; such a task just runs on.
    if (record.ttlMs !== null && record.ttlMs <= MAX_TIMER_MS) {
      task.expiry = setTimeout(() => call.abort("task expired"), record.ttlMs).unref();
    }
    return record;
  }

  /**
   * A tasks/cancel of the task's owner reached this instance (TaskAccess, before it reads the record):
   * from now on a failure written here ends the task cancelled, as one written after a recorded cancel
   * does (decision 0028). The cancel's own write follows a store read later, and this process may
   * write the call's failure meanwhile — a call that broke while the process was frozen fails as it
   * wakes, in the same burst as the cancel that waited for it. Another identity's cancel (refused)
   * changes nothing.
   */
  cancelArrives(taskId: string, ownerHash: string): void {
    const task = this.live.get(taskId);
    if (task?.ownerHash === ownerHash) task.cancelArrived = true;
  }

  hosts(taskId: string): boolean {
    return this.live.has(taskId);
  }

  /** Live tasks right now. */
  count(): number {
    return this.live.size;
  }

  /** Live tasks right now by status: waiting on open questions, or working. */
  countByStatus(): { working: number; input_required: number } {
    let waiting = 0;
    for (const task of this.live.values()) if (!task.questions.isEmpty) waiting += 1;
    return { working: this.live.size - waiting, input_required: waiting };
  }

  /**
   * Delivers answers to a live task's open questions: every answer is checked first (one that does
   * not fit refuses the batch, -32602, nothing delivered); answered keys are gone from the stored
   * record before this resolves. Keys that are not open are ignored. `requestLog`: the log of the
   * request that answers (this instance's own when the answer came from another instance).
   */
  async answer(taskId: string, responses: JsonObject, requestLog: EventLog = this.options.log): Promise<void> {
    const task = this.live.get(taskId);
    if (!task) return;
    // Checked as it arrives, and again in turn: a question withdrawn while the answer waits behind the
    // task's earlier writes (its session ended) must not turn a refusal into an acknowledgement.
    refuseUnfit(task.questions.match(responses));
    const delivered = await this.enqueue(task, async () => {
      const matched = task.questions.match(responses);
      refuseUnfit(matched);
      if (matched.answers.length === 0) return false;
      const open = Object.fromEntries(task.questions.remainingAfter(matched.answers).map(([key, q]) => [key, q.request]));
      const updated = await this.mirror(taskId, open);
      task.questions.take(matched.answers);
      OpenQuestions.deliver(matched.answers);
      requestLog.info({ event: "task.answered", taskId, keys: matched.answers.length, status: updated?.status }, "task input delivered");
      return true;
    });
    // Its questions went with their session, and the call's failure is on its way (naming it may take a probe of the
    // backend): acknowledged once that end is recorded, so a client told "ok" never then reads the task still waiting.
    if (!delivered && task.questions.callEnding && this.live.get(taskId) === task) {
      await new Promise<void>((resolve) => (task.onRelease ??= []).push(resolve));
    }
  }

  /** Marks the task cancelled and stops its upstream call. */
  async cancel(taskId: string, requestLog: EventLog = this.options.log): Promise<void> {
    const updated = await this.options.records.write(taskId, (current) => cancelledRecord(current, "Cancelled by the client"));
    this.release(taskId)?.call.abort("task cancelled by the client");
    if (updated) requestLog.info({ event: "task.cancelled", taskId }, "task cancelled");
  }

  /** An operator's verdict: the task fails with `reason` and its upstream call is stopped. */
  async fail(taskId: string, reason: string, requestLog: EventLog = this.options.log): Promise<void> {
    const task = this.live.get(taskId);
    const updated = await this.options.records.write(taskId, (current) => failedRecord(withArrivedCancel(current, task), reason));
    this.release(taskId)?.call.abort("task failed by an operator");
    if (updated) requestLog.info({ event: "task.failed_by_operator", taskId }, "task failed by an operator");
  }

  /** Tasks left unfinished in a persistent store by a previous process can never finish: fail them. */
  async failOrphans(): Promise<number> {
    const orphans = (await this.options.records.listUnfinished()).filter((r) => !this.live.has(r.taskId));
    for (const orphan of orphans) {
      await this.options.records.write(orphan.taskId, (current) => failedRecord(current, SHUTDOWN.taskOrphaned));
      this.options.log.warn({ event: "task.orphaned", taskId: orphan.taskId }, "task failed: gateway restarted while holding it");
    }
    return orphans.length;
  }

  /** Shutdown: live calls die with the process, so their tasks fail now, saying why. */
  /** Fails every live task, its upstream call stopped; `ending`: why (default: taskgate shuts down). */
  async shutdown(ending: TaskEnding = { abortReason: SHUTDOWN.abortReason, message: SHUTDOWN.taskFailed }): Promise<void> {
    clearInterval(this.sweeper);
    this.stopped = true;
    await Promise.all(
      [...this.live.keys()].map(async (taskId) => {
        const task = this.release(taskId);
        task?.call.abort(ending.abortReason);
        // A store that is gone cannot record it; the next start (or another instance) fails the task then.
        await this.options.records
          .write(taskId, (current) => failedRecord(withArrivedCancel(current, task), ending.message, ending.error))
          .catch((error: unknown) =>
            this.options.log.warn(
              { event: "task.write.failed", taskId, err: error instanceof Error ? error.message : String(error) },
              "could not record the task's end at shutdown",
            ),
          );
      }),
    );
  }

  // --- internals ---------------------------------------------------------------------------

  /** Runs `step` after the task's earlier writes; its result (or error) goes to the caller. */
  private enqueue<T>(task: LiveTask, step: () => Promise<T>): Promise<T> {
    const run = task.chain.then(step);
    task.chain = run.catch(() => undefined);
    return run;
  }

  private inBackground(taskId: string, task: LiveTask, step: () => Promise<unknown>): void {
    this.enqueue(task, step).catch((error: unknown) =>
      this.options.log.error(
        { event: "task.write.failed", taskId, err: error instanceof Error ? error.message : String(error) },
        "task write failed",
      ),
    );
  }

  /** Brings the record's status and inputRequests in line with `open`. */
  private mirror(taskId: string, open: InputRequests): Promise<TaskRecord | undefined> {
    return this.options.records.write(taskId, (current) => {
      const keys = Object.keys(open);
      if (keys.length === 0) {
        return current.status === "input_required" ? withoutInputs({ ...current, status: "working", lastUpdatedAt: now() }) : undefined;
      }
      const same = current.status === "input_required" && sameKeys(current.inputRequests ?? {}, open);
      return same ? undefined : { ...current, status: "input_required", inputRequests: open, lastUpdatedAt: now() };
    });
  }

  private async writeProgress(taskId: string, statusMessage: string): Promise<void> {
    await this.options.records.write(taskId, (current) => ({ ...current, statusMessage, lastUpdatedAt: now() }));
  }

  private async finish(taskId: string, outcome: CallOutcome): Promise<void> {
    // Not live any more: cancelled or shut down, and already written as such.
    const task = this.live.get(taskId);
    if (!task) return;
    const { records, log } = this.options;
    let written: TaskRecord | undefined;
    try {
      written = await this.stored(taskId, () =>
        records.write(taskId, (current) =>
          outcome.kind === "aborted"
            ? cancelledRecord(current, `Stopped: ${outcome.reason}`)
            : outcome.kind === "result"
              ? withoutInputs({ ...current, status: "completed", result: modernResult(outcome.result), lastUpdatedAt: now() })
              : failedRecord(withArrivedCancel(current, task), outcome.error.message, outcome.error.toJSON()),
        ),
      );
    } finally {
      // Let go once the end is written: an answer arriving meanwhile waits its turn and is acknowledged after
      // the end is recorded, so a client told "ok" never then reads the task still waiting for it.
      this.release(taskId);
    }
    // Nothing written: it was already terminal; say what it is.
    const final = written ?? (await records.get(taskId));
    log.info({ event: "task.finished", taskId, status: final?.status, outcome: outcome.kind }, "task finished");
  }

  /**
   * Runs `write` until the store takes it: while it answers store_unavailable, again after 250 ms,
   * doubling up to 4 s, for at most the task's ttl (a record past it is gone anyway); not after shutdown.
   */
  private async stored<T>(taskId: string, write: () => Promise<T>): Promise<T> {
    const giveUpAt = Date.now() + Math.min(this.options.settings.ttlMs, MAX_TIMER_MS);
    for (let wait = 250, tries = 1; ; wait = Math.min(wait * 2, 4_000), tries += 1) {
      try {
        return await write();
      } catch (error) {
        const unavailable = error instanceof RpcError && (error.data as { reason?: string } | undefined)?.reason === "store_unavailable";
        if (!unavailable || this.stopped || Date.now() + wait > giveUpAt) throw error;
        if (tries === 1)
          this.options.log.warn({ event: "task.write.retried", taskId, err: error.message }, "task write waits for the store");
        await new Promise((resolve) => setTimeout(resolve, wait).unref());
      }
    }
  }

  private release(taskId: string): LiveTask | undefined {
    const task = this.live.get(taskId);
    this.live.delete(taskId);
    if (task?.expiry) clearTimeout(task.expiry);
    if (task?.onRelease) for (const resolve of task.onRelease.splice(0)) resolve();
    return task;
  }
}

/** -32602 for an answer that does not fit its open question (nothing is delivered). */
function refuseUnfit(matched: MatchResult): asserts matched is Extract<MatchResult, { ok: true }> {
  if (!matched.ok)
    throw invalidParams(`inputResponses.${matched.key}: ${matched.problem} (the question stays open; send a corrected answer)`);
}

function sameKeys(a: InputRequests, b: InputRequests): boolean {
  const left = Object.keys(a);
  return left.length === Object.keys(b).length && left.every((key) => Object.hasOwn(b, key));
}

/** The text of a log message worth showing as a task's statusMessage (info and above, a string). */
function statusTextOf(entry: LogEntry): string | undefined {
  if (!shouldRelayLog(entry.level, "info")) return undefined;
  const text =
    typeof entry.data === "string"
      ? entry.data
      : isObject(entry.data) && typeof entry.data.message === "string"
        ? entry.data.message
        : undefined;
  return text === undefined ? undefined : text.slice(0, 500);
}

const progressText = (p: { progress: number; total?: number }) =>
  p.total !== undefined ? `Progress ${p.progress}/${p.total}` : `Progress ${p.progress}`;
