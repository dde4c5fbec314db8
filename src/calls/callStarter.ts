// How the call owner starts a call upstream: one request (an UpstreamCall), or, for a 2025-11-25
// task tool on an upstream that runs tool tasks, a task upstream that is followed (the same
// RunningCall, run another way), or, on a backend that speaks 2026-07-28, a call run on it with
// MRTR rounds (modernCall.ts). A call that must be approved first runs its gate before any of them
// (access/callGuard.ts): nothing reaches the upstream until the gate lets it through. The common
// plain call may instead take the short road (directCalls: by callback on a lent session, see
// calls/quickCall.ts), and be handed over to a RunningCall later (CallStart.adopt).
// A seam: unit tests of the call owner start scripted calls instead.

import type { EventLog } from "../observability/requestLog.js";
import { tracingOn } from "../observability/tracing.js";
import { type RpcError, upstreamEraChanged } from "../protocol/errors.js";
import type { HeaderMap } from "../protocol/headerValue.js";
import type { JsonObject } from "../protocol/wire.js";
import { mayMeanEraChange } from "../upstream/backendEra.js";
import type { LegacyClientCapabilities } from "../upstream/capabilityProfile.js";
import { DirectCall, type DirectSink } from "../upstream/directCall.js";
import { modernCallRunner } from "../upstream/modernCall.js";
import { type ModernLink, paramHeadersOf } from "../upstream/modernLink.js";
import {
  type CallOutcome,
  type CallRun,
  type CallRunner,
  type CallWatcher,
  type RunningCall,
  runAsOneRequest,
  UpstreamCall,
  type UpstreamCallTarget,
} from "../upstream/upstreamCall.js";
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
  /** The request's `_meta` and headers (a modern backend gets the caller's capabilities and Mcp-Param-* headers). */
  meta?: JsonObject;
  headers?: HeaderMap;
  /** The log of the request that starts the call. */
  log: EventLog;
  /** The tool's 2025-11-25 execution.taskSupport, if it declares one. */
  taskSupport?: string | undefined;
  /** The call may become a task for the client (the request declared the extension and the policy allows one). */
  mayBecomeTask: boolean;
  /** Someone reads the call's progress: the client asked for it (a progressToken), or the call is or may become a task.
   *  Only then is the upstream asked for it (decisions/0039). */
  asksProgress: boolean;
  /** Runs before anything is sent upstream (an approval); rejecting stops the call there. */
  gate?: ((run: CallRun) => Promise<void>) | undefined;
  /** A call already running upstream on the short road, handed over to this RunningCall (QuickCall's promotion). */
  adopt?: CallRunner | undefined;
}

/** The call, at once when nothing must be asked first (a task tool asks the upstream's capabilities). */
export type StartCall = (start: CallStart) => RunningCall | Promise<RunningCall>;

/** A modern backend, when the backend is one now. */
export interface ModernCalls {
  /** The link while the backend speaks 2026-07-28; undefined while it speaks the session protocol. */
  linkNow(): ModernLink | undefined;
  headersFor(owner: string): Record<string, string>;
  /** Probes the backend again (a legacy call failed in a way that may mean it upgraded): whether it is modern now. */
  upgraded(why: string): Promise<boolean>;
}

/** Starts calls on `pool` (or on the modern backend, while it is one); a 2025-11-25 task upstream asks for `taskTtlMs`. */
export function upstreamCalls(pool: UpstreamPool, taskTtlMs: number, modern?: ModernCalls): StartCall {
  return (start) => {
    const target = { pool, owner: start.owner, profile: start.profile, relaysLogs: start.relaysLogs, asksProgress: start.asksProgress };
    if (start.adopt) {
      // Already running on a legacy session (the short road's): adopted as it is, whatever the backend's era is by now.
      const call = new UpstreamCall(target, start.method, start.params, start.log, start.adopt);
      return modern ? namedWhenUpgraded(call, modern) : call;
    }
    const link = modern?.linkNow();
    const made = (runner: CallRunner | undefined) => {
      const call = gatedCall(start, target, runner);
      return modern && !link ? namedWhenUpgraded(call, modern) : call;
    };
    if (link && modern) {
      const headers = () => ({ ...modern.headersFor(start.owner), ...paramHeadersOf(start.headers ?? {}) });
      const { method, params, asksProgress } = start;
      return made(modernCallRunner(link, { method, params, meta: start.meta ?? {}, headers, asksProgress }));
    }
    if (start.method === "tools/call" && runsAsUpstreamTask(start.taskSupport, start.mayBecomeTask)) {
      return pool
        .info(start.owner)
        .then((info) => made(upstreamRunsToolTasks(info.capabilities) ? upstreamTaskRunner(target, start.params, taskTtlMs) : undefined));
    }
    return made(undefined);
  };
}

/** The call, behind its gate when it has one (nothing is sent before the gate lets it through). */
function gatedCall(start: CallStart, target: UpstreamCallTarget, runner: CallRunner | undefined): RunningCall {
  const { gate } = start;
  if (!gate)
    return runner
      ? new UpstreamCall(target, start.method, start.params, start.log, runner)
      : new UpstreamCall(target, start.method, start.params, start.log);
  const inner: CallRunner = runner ?? ((run) => runAsOneRequest(target, start.method, start.params, run));
  return new UpstreamCall(target, start.method, start.params, start.log, async (run) => {
    await gate(run);
    return inner(run);
  });
}

/** A legacy call whose failure came from its backend moving to 2026-07-28 fails with that named (upstream_era_changed). */
function namedWhenUpgraded(call: RunningCall, modern: ModernCalls): RunningCall {
  return new UpgradeAwareCall(call, modern);
}

/** A legacy call's error, named upstream_era_changed when it came from the backend moving to 2026-07-28 (probed again). */
function eraNamed(error: RpcError, modern: ModernCalls): RpcError | Promise<RpcError> {
  if (!mayMeanEraChange(error)) return error;
  return modern
    .upgraded(`a legacy call failed: ${error.message.slice(0, 160)}`)
    .then((upgraded) => (upgraded ? upstreamEraChanged(error.message) : error));
}

/**
 * The short road of a call (calls/quickCall.ts): sent at once, by callback, on a session the pool
 * lends now. Only a plain call takes it: one request on a legacy session, no gate, no 2025-11-25
 * task upstream, no log messages relayed, tracing off (its spans are the promise road's). Anything
 * else, or no open session with room, is undefined: the caller starts the call on the full road.
 */
export interface DirectCalls {
  start(start: CallStart, sink: DirectSink): DirectCall | undefined;
  /** An error of a direct call as the full road names it (upstream_era_changed when the backend moved era). */
  named(error: RpcError): RpcError | Promise<RpcError>;
}

export function directCalls(pool: UpstreamPool, modern?: ModernCalls): DirectCalls {
  return {
    start(start, sink) {
      if (start.gate || start.relaysLogs || tracingOn() || modern?.linkNow()) return undefined;
      if (start.method === "tools/call" && runsAsUpstreamTask(start.taskSupport, start.mayBecomeTask)) return undefined;
      return DirectCall.start(pool, start, sink);
    },
    named: (error) => (modern ? eraNamed(error, modern) : error),
  };
}

/** `call`, its failure named when the backend moved era. A class, not an object of closures: every legacy call of
 *  a backend that may be modern has one, and a result passes through a plain callback (no async function's promise). */
class UpgradeAwareCall implements RunningCall {
  readonly outcome: Promise<CallOutcome>;

  constructor(
    private readonly call: RunningCall,
    modern: ModernCalls,
  ) {
    this.outcome = call.outcome.then((ended) => {
      if (ended.kind !== "error") return ended;
      const named = eraNamed(ended.error, modern);
      return named instanceof Promise ? named.then((error): CallOutcome => ({ kind: "error", error })) : ended;
    });
  }

  get asked(): Promise<void> {
    return this.call.asked;
  }

  watch(watcher: CallWatcher): () => void {
    return this.call.watch(watcher);
  }

  abort(reason: string): void {
    this.call.abort(reason);
  }

  logTo(log: EventLog, fields: Record<string, unknown>): void {
    this.call.logTo(log, fields);
  }
}
