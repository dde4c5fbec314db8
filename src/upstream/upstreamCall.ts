// One request running upstream on a client's behalf (a tools/call, or a read that may ask), run as
// one request (the default) or another way (a 2025-11-25 task upstream: see upstreamTaskCall.ts).
// It outlives the HTTP request that started it: whoever holds it (an inline reply, a parked MRTR
// call, a task) follows its progress, questions and log messages and may abort it. Questions
// asked before anyone watches are kept until someone does. The outcome is a result, a JSON-RPC
// error (the upstream's own, or one naming what went wrong on the way), or "aborted".
// A question of a kind the call's own request did not declare (its session may declare more: one
// session serves all of an identity's requests) never reaches a holder: the upstream gets the
// answer a client without that capability gives (-32601 "Method not found") and the call goes on;
// if it then fails (a JSON-RPC error or an isError result) and the question was certainly its own
// (inside its stream, or tagged with its task), the client is told what it lacked (-32021 with
// requiredCapabilities), as a 2026-07-28 server would.

import type { EventLog } from "../observability/requestLog.js";
import { ErrorCode, missingCapability, type RpcError, requestCancelled } from "../protocol/errors.js";
import type { InputRequest, JsonObject, JsonRpcErrorObject } from "../protocol/wire.js";
import { missingCapabilityFor } from "../questions/declaredKinds.js";
import type { Question } from "../questions/question.js";
import { isObject } from "../util/json.js";
import type { CallContext, LogEntry } from "./callContext.js";
import type { LegacyClientCapabilities } from "./capabilityProfile.js";
import type { Progress } from "./jsonRpcPeer.js";
import { CallStopped, toClientError, UpstreamRpcError } from "./upstreamFailure.js";
import type { CallOptions, UpstreamPool } from "./upstreamPool.js";

export type { Progress };

export type CallOutcome = { kind: "result"; result: JsonObject } | { kind: "error"; error: RpcError } | { kind: "aborted"; reason: string };

export interface CallWatcher {
  progress?(progress: Progress): void;
  /** The upstream's own words on how the call is going (a 2025-11-25 task's statusMessage). */
  status?(message: string): void;
  question?(question: Question): void;
  log?(entry: LogEntry): void;
}

/** What the holders of a call (an inline reply, a parked MRTR call, a task) use of it. */
export interface RunningCall {
  readonly outcome: Promise<CallOutcome>;
  /** Resolves when the upstream asks its first question. */
  readonly asked: Promise<void>;
  /** Follow this call; returns the way to stop following. */
  watch(watcher: CallWatcher): () => void;
  /** Stop the call upstream. */
  abort(reason: string): void;
  /** From now on, this call's log lines go to `log` with `fields` (e.g. the task it became). */
  logTo(log: EventLog, fields: Record<string, unknown>): void;
}

export interface UpstreamCallTarget {
  pool: UpstreamPool;
  /** Whose call it is: it runs on a session of this owner only. */
  owner: string;
  profile: LegacyClientCapabilities;
  /** The client asked for this call's log messages (a logLevel). */
  relaysLogs?: boolean;
  /** The upstream is asked for the call's progress (a progressToken): someone reads it (CallStart.asksProgress). */
  asksProgress: boolean;
}

/** What a way of running a call gets: where its questions and logs go, what stops it, who hears of it. */
export interface CallRun {
  context: CallContext;
  /** Aborted when a holder stops the call: end with CallStopped. */
  signal: AbortSignal;
  onprogress(progress: Progress): void;
  onstatus(message: string): void;
  /** Writes a line to the call's log (the holder's fields added). */
  note(level: "info" | "warn", fields: Record<string, unknown>, message: string): void;
}

/** The default way a call runs: one request on a session of its owner, taking from its run the progress listener (and
 *  with it a progressToken upstream) only when the call asks for progress. */
export function runAsOneRequest(target: UpstreamCallTarget, method: string, params: JsonObject, run: CallRun): Promise<JsonObject> {
  const options: CallOptions = target.asksProgress ? run : { context: run.context, signal: run.signal };
  return target.pool.call(target.owner, target.profile, method, params, options);
}

/** A way of running a call upstream: resolves with its result. */
export type CallRunner = (run: CallRun) => Promise<JsonObject>;

export class UpstreamCall implements RunningCall {
  readonly outcome: Promise<CallOutcome>;
  /** Made when someone waits for the first question (most calls never ask one). */
  private askedPromise?: Promise<void>;
  private markAsked?: () => void;
  private hasAsked = false;
  private readonly controller = new AbortController();
  private readonly watchers = new Set<CallWatcher>();
  /** Questions asked before anyone watched (made when one is). */
  private unclaimed?: Question[];
  private finished = false;
  private fields: Record<string, unknown> = {};
  /** The first question refused because the request did not declare its kind. */
  private undeclared?: { method: string; missing: Record<string, unknown> };

  /** `log`: the log of the request that starts the call. `runner`: how it runs (default: one request). */
  constructor(
    target: UpstreamCallTarget,
    readonly method: string,
    readonly params: JsonObject,
    private log: EventLog,
    runner?: CallRunner,
  ) {
    const run = new CallLine(this, target.profile, target.relaysLogs === true, this.controller.signal);
    const running = runner ? runner(run) : runAsOneRequest(target, method, params, run);
    // `finished` is set as the outcome is known (one promise, no finally hop after it).
    this.outcome = running.then(
      (result): CallOutcome => {
        this.finished = true;
        return result.isError === true ? this.failed(undefined, result) : { kind: "result", result };
      },
      (error: unknown): CallOutcome => {
        this.finished = true;
        return error instanceof CallStopped || this.controller.signal.aborted
          ? { kind: "aborted", reason: String(this.controller.signal.reason ?? (error as Error).message) }
          : this.failed(toClientError(error));
      },
    );
  }

  /** Resolves when the upstream asks its first question. */
  get asked(): Promise<void> {
    if (this.hasAsked) return Promise.resolve();
    this.askedPromise ??= new Promise((resolve) => (this.markAsked = resolve));
    return this.askedPromise;
  }

  /** Follow this call. Questions nobody has claimed yet are handed to the new watcher at once. */
  watch(watcher: CallWatcher): () => void {
    this.watchers.add(watcher);
    if (watcher.question && this.unclaimed) {
      for (const question of this.unclaimed.splice(0)) if (!question.settled) watcher.question(question);
    }
    return () => this.watchers.delete(watcher);
  }

  /** Stop the upstream call: notifications/cancelled goes upstream and its exchange is closed. */
  abort(reason: string): void {
    if (this.finished || this.controller.signal.aborted) return;
    this.log.info({ event: "upstream.call.cancelled", ...this.fields, method: this.method, reason }, "upstream call cancelled");
    this.controller.abort(reason);
  }

  logTo(log: EventLog, fields: Record<string, unknown>): void {
    this.log = log;
    this.fields = fields;
  }

  /** A failed call: its own error (or isError result), or -32021 when it failed after an undeclared question was refused. */
  private failed(error: RpcError | undefined, result?: JsonObject): CallOutcome {
    const undeclared = this.undeclared;
    if (!undeclared) return error ? { kind: "error", error } : { kind: "result", result: result ?? {} };
    const said = error ? error.message : textOf(result);
    return {
      kind: "error",
      error: missingCapability(
        undeclared.missing,
        `the upstream asked for ${undeclared.method}, which this request did not declare, and the call failed` +
          (said ? ` (upstream: ${said.slice(0, 200)})` : ""),
      ),
    };
  }

  /** Tells every watcher (CallLine: the upstream's progress, status and log messages). */
  tell(what: (watcher: CallWatcher) => void): void {
    this.watchers.forEach(what);
  }

  /** A line of the call's log, with its holder's fields (CallLine). */
  noteLine(level: "info" | "warn", fields: Record<string, unknown>, message: string): void {
    this.log[level]({ ...this.fields, method: this.method, ...fields }, message);
  }

  /** Refuses a question the request did not declare (as a client without that capability would); asks the holders
   *  otherwise. Only a question certainly the call's own (not `inferred`) can turn the call's failure into -32021. */
  answerOrAsk(declared: LegacyClientCapabilities, request: InputRequest, withdrawn: AbortSignal, inferred: boolean): Promise<JsonObject> {
    const missing = missingCapabilityFor(request, declared);
    if (!missing) return this.ask(request, withdrawn);
    if (!inferred) this.undeclared ??= { method: request.method, missing };
    this.log.info(
      { event: "upstream.question.undeclared", ...this.fields, method: this.method, question: request.method },
      "upstream asked for a capability this request did not declare: answered Method not found",
    );
    return Promise.reject(new UpstreamRpcError({ code: ErrorCode.MethodNotFound, message: "Method not found" }));
  }

  private ask(request: InputRequest, withdrawn: AbortSignal): Promise<JsonObject> {
    return new Promise<JsonObject>((resolve, reject) => {
      const calls = this.controller.signal;
      const question = new AskedQuestion(request, withdrawn, (outcome) => {
        calls.removeEventListener("abort", onAbort);
        outcome.answered ? resolve(outcome.result) : reject(new UpstreamRpcError(outcome.error));
      });
      const onAbort = () => question.refuse(requestCancelled().toJSON());
      // The call's own abort withdraws every question too.
      calls.addEventListener("abort", onAbort, { once: true });
      this.hasAsked = true;
      this.markAsked?.();
      const askers = [...this.watchers].filter((w) => w.question);
      if (askers.length === 0) (this.unclaimed ??= []).push(question);
      else askers.forEach((w) => w.question!(question));
    });
  }
}

type Outcome = { answered: true; result: JsonObject } | { answered: false; error: JsonRpcErrorObject };

/** A question the upstream asked during a call: answered or refused once. A class, not a literal with a
 *  getter (decisions/0036: V8 keeps a literal's accessor, and all its closure holds, through young collections). */
class AskedQuestion implements Question {
  private done = false;

  constructor(
    readonly request: InputRequest,
    readonly withdrawn: AbortSignal,
    private readonly settle: (outcome: Outcome) => void,
  ) {}

  get settled(): boolean {
    return this.done || this.withdrawn.aborted;
  }

  answer(result: JsonObject): void {
    if (this.done) return;
    this.done = true;
    this.settle({ answered: true, result });
  }

  refuse(error: JsonRpcErrorObject): void {
    if (this.done) return;
    this.done = true;
    this.settle({ answered: false, error });
  }
}

/** One call's run and context in one object of methods: what the runner and the session get of it (one allocation
 *  per call, not two objects of six closures). The session knows the call by this object (its context). */
class CallLine implements CallRun, CallContext {
  readonly context: CallContext = this;

  constructor(
    private readonly call: UpstreamCall,
    private readonly profile: LegacyClientCapabilities,
    readonly relaysLogs: boolean,
    readonly signal: AbortSignal,
  ) {}

  onInput(request: InputRequest, withdrawn: AbortSignal, inferred: boolean): Promise<JsonObject> {
    return this.call.answerOrAsk(this.profile, request, withdrawn, inferred);
  }

  onLog(entry: LogEntry): void {
    this.call.tell((w) => w.log?.(entry));
  }

  /** A property, not a method: the peer keeps it as the request's progress listener, called on its own. */
  readonly onprogress = (progress: Progress): void => this.call.tell((w) => w.progress?.(progress));

  onstatus(message: string): void {
    this.call.tell((w) => w.status?.(message));
  }

  note(level: "info" | "warn", fields: Record<string, unknown>, message: string): void {
    this.call.noteLine(level, fields, message);
  }
}

/** The text of a tool result's first text content, if any. */
function textOf(result: JsonObject | undefined): string | undefined {
  const content = Array.isArray(result?.content) ? result.content : [];
  const first = content.find((item): item is { type: "text"; text: string } => isObject(item) && typeof item.text === "string");
  return first?.text;
}
