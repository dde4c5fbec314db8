// A tools/call run as a 2025-11-25 task upstream: the upstream declares tasks.requests.tools.call
// and the tool's execution.taskSupport is "required" (a plain call would be refused), or
// "optional" and the caller declared the tasks extension. It is an UpstreamCall like any other, so
// a task, an inline reply or a parked MRTR call holds it alike; only the way it runs differs:
//   1. tools/call with params.task { ttl } → CreateTaskResult, within upstream.requestTimeoutMs
//      (a plain result instead — the upstream ran it directly — is the call's result);
//   2. tasks/result at once, held open: it blocks until the task ends, then answers with the
//      tool's result or error, and it is the stream on which the upstream sends the task's
//      questions. Questions it sends elsewhere tagged with the task (related-task _meta, e.g. on
//      the GET stream) reach the call too (UpstreamSession.followTask);
//   3. meanwhile tasks/get every pollInterval (floor and cap below): its statusMessage becomes the
//      call's status; a task the upstream no longer knows fails the call, and once the task ended
//      tasks/result must answer within upstream.requestTimeoutMs (a tasks/get that cannot connect
//      is tried again at the next poll, for as long);
//   4. a stopped call, or one that failed following the task, cancels it upstream with tasks/cancel
//      (never notifications/cancelled, which 2025-11-25 forbids for tasks); -32602 (it had ended
//      already) is no failure.
// All on one upstream session held while the task runs: the upstream task lives there. Progress
// notifications of the upstream task are not relayed; its statusMessage is.

import { setTimeout as sleep } from "node:timers/promises";
import { ErrorCode } from "../protocol/errors.js";
import { type JsonObject, type TaskStatus, TERMINAL_STATUSES } from "../protocol/wire.js";
import { isObject } from "../util/json.js";
import type { CallRun, CallRunner, UpstreamCallTarget } from "./upstreamCall.js";
import { CallStopped, isSessionGone, UpstreamFailure, UpstreamRpcError } from "./upstreamFailure.js";
import type { UpstreamSession } from "./upstreamSession.js";

/** tasks/get no more often than this, whatever pollInterval the upstream suggests… */
const POLL_FLOOR_MS = 250;
/** …and at least this often, so a stalled tasks/result is noticed in time. */
const POLL_CAP_MS = 5_000;
/** When the upstream suggests no pollInterval. */
const POLL_DEFAULT_MS = 1_000;

/** The 2025-11-25 Task fields taskgate reads. */
interface UpstreamTask {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  pollInterval?: number;
}

/** Whether the upstream runs tools/call as 2025-11-25 tasks (its capabilities.tasks.requests.tools.call). */
export function upstreamRunsToolTasks(capabilities: JsonObject): boolean {
  const requests = isObject(capabilities.tasks) && isObject(capabilities.tasks.requests) ? capabilities.tasks.requests : undefined;
  return isObject(requests?.tools) && isObject(requests.tools.call);
}

/** Whether a tools/call of a tool with this execution.taskSupport is run as an upstream task. */
export function runsAsUpstreamTask(taskSupport: string | undefined, callerWantsTask: boolean): boolean {
  return taskSupport === "required" || (taskSupport === "optional" && callerWantsTask);
}

/** Starts `params` (a tools/call's name and arguments) as a 2025-11-25 task upstream, asking for `ttlMs`. */
/** How a tools/call runs as a 2025-11-25 task upstream (a CallRunner: another step may run before it). */
export function upstreamTaskRunner(target: UpstreamCallTarget, params: JsonObject, ttlMs: number): CallRunner {
  return (run) =>
    target.pool.run(target.owner, target.profile, run.context, (session) =>
      new TaskFollower(session, run, target.pool.requestTimeout).run({ ...params, task: { ttl: ttlMs } }),
    );
}

/** Follows one upstream task on the session that owns it. */
class TaskFollower {
  private taskId?: string;

  constructor(
    private readonly session: UpstreamSession,
    private readonly call: CallRun,
    private readonly limit: { ms: number; option: string },
  ) {}

  async run(params: JsonObject): Promise<JsonObject> {
    const { signal } = this.call;
    if (signal.aborted) throw new CallStopped(String(signal.reason));
    // Not stopped by the signal: a task being created is cancelled once it exists (below).
    const created = await this.session.request("tools/call", params, { context: this.call.context, timeout: this.limit });
    const task = taskOf(created.task);
    if (!task) return created;
    this.taskId = task.taskId;
    this.call.note("info", { event: "upstream.task.created", upstreamTaskId: task.taskId }, "upstream runs the call as a task");
    try {
      if (signal.aborted) throw new CallStopped(String(signal.reason));
      return await this.follow(task);
    } catch (error) {
      // The task exists upstream: never run the call again on a fresh session (UpstreamPool.run would).
      if (isSessionGone(error)) {
        throw new UpstreamFailure(
          "upstream_lost",
          `Upstream call lost: the upstream session holding task ${task.taskId} ended (${error.message})`,
        );
      }
      // Stopped, or given up on: nobody follows the task any more, so it should not run on.
      await this.cancel();
      if (signal.aborted) throw new CallStopped(String(signal.reason));
      throw error;
    }
  }

  /** The task's result (from tasks/result) while tasks/get watches it; rejects with CallStopped when the call is stopped. */
  private async follow(task: UpstreamTask): Promise<JsonObject> {
    const stopRouting = this.session.followTask(task.taskId, this.call.context);
    const done = new AbortController();
    const stop = AbortSignal.any([this.call.signal, done.signal]);
    try {
      return await Promise.race([this.result(task.taskId, stop), this.watch(task, stop), stopped(this.call.signal, done.signal)]);
    } finally {
      done.abort(new CallStopped("the upstream task's result came"));
      stopRouting();
    }
  }

  /** tasks/result: it blocks until the task ends and carries the task's questions meanwhile. */
  private result(taskId: string, stop: AbortSignal): Promise<JsonObject> {
    return this.session.request("tasks/result", { taskId }, { context: this.call.context, signal: stop });
  }

  /** Polls tasks/get until `stop`; rejects when the upstream forgot the task or tasks/result does not come after its end. */
  private async watch(first: UpstreamTask, stop: AbortSignal): Promise<never> {
    let task = first;
    let shown: string | undefined;
    let endedAt: number | undefined;
    let unreachableSince: number | undefined;
    for (;;) {
      if (task.statusMessage && task.statusMessage !== shown) this.call.onstatus((shown = task.statusMessage));
      if (TERMINAL_STATUSES.has(task.status)) endedAt ??= Date.now();
      if (endedAt !== undefined && Date.now() - endedAt >= this.limit.ms) {
        throw new UpstreamFailure(
          "upstream_timeout",
          `Upstream timed out: no answer to tasks/result within ${this.limit.ms} ms ` +
            `of its task ${task.taskId} ending ${task.status} (${this.limit.option})`,
        );
      }
      await sleep(pollIntervalOf(task), undefined, { signal: stop });
      try {
        task = await this.get(task.taskId);
        unreachableSince = undefined;
      } catch (error) {
        // A refused or reset connection may pass (the next poll, or tasks/result, tells); for long, it fails the call.
        if (!(error instanceof UpstreamFailure && error.reason === "upstream_unreachable")) throw error;
        unreachableSince ??= Date.now();
        if (Date.now() - unreachableSince >= this.limit.ms) throw error;
      }
    }
  }

  private async get(taskId: string): Promise<UpstreamTask> {
    let answer: JsonObject;
    try {
      answer = await this.session.request("tasks/get", { taskId }, { timeout: this.limit });
    } catch (error) {
      if (!(error instanceof UpstreamRpcError)) throw error;
      throw new UpstreamFailure(
        "upstream_lost",
        `Upstream call lost: the upstream no longer knows its task ${taskId} (tasks/get: ${error.message})`,
      );
    }
    const task = taskOf(answer);
    if (!task) throw new UpstreamFailure("upstream_lost", `Upstream call lost: tasks/get for task ${taskId} answered no task`);
    return task;
  }

  /** tasks/cancel upstream; a task that ended already (-32602) needs none, other failures are logged. */
  private async cancel(): Promise<void> {
    const taskId = this.taskId!;
    try {
      await this.session.request("tasks/cancel", { taskId }, { timeout: this.limit });
      this.call.note("info", { event: "upstream.task.cancelled", upstreamTaskId: taskId }, "upstream task cancelled");
    } catch (error) {
      if (error instanceof UpstreamRpcError && error.error.code === ErrorCode.InvalidParams) {
        this.call.note(
          "info",
          { event: "upstream.task.cancelled", upstreamTaskId: taskId, alreadyEnded: true },
          "upstream task needed no cancel: it had ended or is gone",
        );
        return;
      }
      const why = error instanceof Error ? error.message : String(error);
      this.call.note(
        "warn",
        { event: "upstream.task.cancel_failed", upstreamTaskId: taskId, err: why },
        "upstream task could not be cancelled",
      );
    }
  }
}

/** A 2025-11-25 Task (a CreateTaskResult's `task`, or a tasks/get result), or undefined. */
function taskOf(value: unknown): UpstreamTask | undefined {
  if (!isObject(value) || typeof value.taskId !== "string" || typeof value.status !== "string") return undefined;
  return {
    taskId: value.taskId,
    status: value.status as TaskStatus,
    ...(typeof value.statusMessage === "string" ? { statusMessage: value.statusMessage } : {}),
    ...(typeof value.pollInterval === "number" ? { pollInterval: value.pollInterval } : {}),
  };
}

const pollIntervalOf = (task: UpstreamTask) => Math.min(POLL_CAP_MS, Math.max(POLL_FLOOR_MS, task.pollInterval ?? POLL_DEFAULT_MS));

/** Rejects with CallStopped when `signal` aborts; settles never otherwise (its listener goes when `done` aborts). */
function stopped(signal: AbortSignal, done: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    const onAbort = () => reject(new CallStopped(String(signal.reason)));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    done.addEventListener("abort", () => signal.removeEventListener("abort", onAbort), { once: true });
  });
}
