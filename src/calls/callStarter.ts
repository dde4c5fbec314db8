// How the call owner starts a call upstream: one request (an UpstreamCall), or, for a 2025-11-25
// task tool on an upstream that runs tool tasks, a task upstream that is followed (the same
// RunningCall, run another way). A call that must be approved first runs its gate before either
// (access/callGuard.ts): nothing reaches the upstream until the gate lets it through.
// A seam: unit tests of the call owner start scripted calls instead.

import type { EventLog } from "../observability/requestLog.js";
import type { JsonObject } from "../protocol/wire.js";
import type { LegacyClientCapabilities } from "../upstream/capabilityProfile.js";
import { type CallRun, type CallRunner, type RunningCall, UpstreamCall } from "../upstream/upstreamCall.js";
import type { UpstreamPool } from "../upstream/upstreamPool.js";
import { runsAsUpstreamTask, upstreamRunsToolTasks, upstreamTaskRunner } from "../upstream/upstreamTaskCall.js";

/** One call to start upstream, on a session of `owner` with the caller's capability profile. */
export interface CallStart {
  owner: string;
  profile: LegacyClientCapabilities;
  /** The client asked for the call's log messages (a logLevel). */
  relaysLogs: boolean;
  method: string;
  params: JsonObject;
  /** The log of the request that starts the call. */
  log: EventLog;
  /** The tool's 2025-11-25 execution.taskSupport, if it declares one. */
  taskSupport?: string | undefined;
  /** The call may become a task for the client (the request declared the extension and the policy allows one). */
  mayBecomeTask: boolean;
  /** Runs before anything is sent upstream (an approval); rejecting stops the call there. */
  gate?: ((run: CallRun) => Promise<void>) | undefined;
}

export type StartCall = (start: CallStart) => Promise<RunningCall>;

/** Starts calls on `pool`; a 2025-11-25 task upstream asks for `taskTtlMs`. */
export function upstreamCalls(pool: UpstreamPool, taskTtlMs: number): StartCall {
  return async (start) => {
    const target = { pool, owner: start.owner, profile: start.profile, relaysLogs: start.relaysLogs };
    let runner: CallRunner | undefined;
    if (start.method === "tools/call" && runsAsUpstreamTask(start.taskSupport, start.mayBecomeTask)) {
      const info = await pool.info(start.owner);
      if (upstreamRunsToolTasks(info.capabilities)) runner = upstreamTaskRunner(target, start.params, taskTtlMs);
    }
    const { gate } = start;
    if (!gate)
      return runner
        ? new UpstreamCall(target, start.method, start.params, start.log, runner)
        : new UpstreamCall(target, start.method, start.params, start.log);
    const inner: CallRunner = runner ?? ((run) => pool.call(start.owner, start.profile, start.method, start.params, run));
    return new UpstreamCall(target, start.method, start.params, start.log, async (run) => {
      await gate(run);
      return inner(run);
    });
  };
}
