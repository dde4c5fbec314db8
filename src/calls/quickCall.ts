// QuickCall: the short road of an inline call (decisions/0036). Most calls ask nothing, report
// nothing the client asked to see, and end within the JSON window: for them the call owner sends
// the request straight onto a session the pool lends at once (a DirectCall, by callback) and
// answers its result as JSON, with one promise for the reply and no RunningCall, InlineCall,
// signal or timer of the call's own. Everything else joins when the call needs it: the first
// question, or the window ending with no answer yet, promotes the call — the desk's full road
// (callDesk.ts) makes the RunningCall of it (adopting the request already running upstream) and
// an InlineCall, and goes on from there exactly as for a call started on that road: MRTR rounds,
// an SSE stream, a task under policy auto. Progress and log messages before that go nowhere, as
// on the full road for a request that asked for neither (a request that did takes the full road).
// A client that leaves, or a shutdown, stops the call upstream (notifications/cancelled) as the
// full road does. States: running → done (answered, client gone, shut down) | promoted.

import { internalError, type RpcError, shuttingDown } from "../protocol/errors.js";
import { SHUTDOWN } from "../protocol/reasons.js";
import { errorReply, type Reply, resultReply } from "../protocol/reply.js";
import { noteErrorReason } from "../protocol/requestNote.js";
import type { InputRequest, JsonObject } from "../protocol/wire.js";
import type { LogEntry } from "../upstream/callContext.js";
import type { DirectCall, DirectSink } from "../upstream/directCall.js";
import type { Progress } from "../upstream/jsonRpcPeer.js";
import type { CallRun, CallRunner } from "../upstream/upstreamCall.js";
import { CallStopped, toClientError } from "../upstream/upstreamFailure.js";
import { modernResult } from "../upstream/upstreamResult.js";
import { type Deadline, Deadlines } from "../util/deadlines.js";
import type { CallRequest } from "./callDesk.js";
import type { CallStart, DirectCalls } from "./callStarter.js";
import type { Drainable, LiveInlineCalls } from "./liveInlineCalls.js";

export interface QuickCallOptions {
  calls: DirectCalls;
  start: CallStart;
  request: CallRequest;
  /** How long the call may take on the short road: the JSON window (policy auto: tasks.autoAfterMs). */
  windowMs: number;
  live: LiveInlineCalls;
  /** Ends the call's count against quotas (the full road counts a promoted call itself). */
  uncount: () => void;
  /** Extra fields for a complete result (cacheable reads). */
  decorate?: ((result: JsonObject) => JsonObject) | undefined;
  /** The full road from here: a RunningCall made with `adopt` (the request running upstream), `elapsedMs` after the start. */
  promote(adopt: CallRunner, elapsedMs: number): Promise<Reply>;
}

type State = "running" | "done" | "promoted";

/** What the full road's RunningCall waits on once it adopted the request. */
interface Adopted {
  resolve(result: JsonObject): void;
  reject(error: Error): void;
}

export class QuickCall implements DirectSink, Drainable {
  /** A request that asked for log messages takes the full road (it waits for late ones). */
  readonly relaysLogs = false;
  private state: State = "running";
  private direct!: DirectCall;
  private window?: Deadline;
  private answer!: (reply: Reply | Promise<Reply>) => void;
  private readonly startedAt = performance.now();
  /** After promotion: the RunningCall's run (questions, logs and progress go there) and what it waits on. */
  private line?: CallRun;
  private adopted?: Adopted;

  private constructor(private readonly options: QuickCallOptions) {}

  /** The call on the short road, answered by the returned promise; undefined when it cannot take it (no session lent
   *  now, or not a plain call): nothing was sent, the caller starts it on the full road. */
  static begin(options: QuickCallOptions): Promise<Reply> | undefined {
    const quick = new QuickCall(options);
    const direct = options.calls.start(options.start, quick);
    if (!direct) return undefined;
    quick.direct = direct;
    options.live.add(quick);
    const reply = new Promise<Reply>((resolve) => (quick.answer = resolve));
    quick.window = Deadlines.of(options.windowMs).start(() => quick.promote());
    options.request.gone.onGone(() => quick.clientGone());
    return reply;
  }

  // --- the upstream's side (DirectSink) ------------------------------------------------------

  result(result: JsonObject): void {
    if (this.adopted) return this.adopted.resolve(result);
    if (!this.end()) return;
    const { note } = this.options.request;
    if (!note.outcome) note.outcome = result.isError === true ? "tool_error" : "result";
    const modern = modernResult(result);
    this.answer(resultReply(this.options.decorate ? this.options.decorate(modern) : modern));
  }

  failed(error: Error): void {
    if (this.adopted) return this.adopted.reject(error);
    if (!this.end()) return;
    const named = this.options.calls.named(toClientError(error));
    this.answer(named instanceof Promise ? named.then((rpc) => this.failure(rpc)) : this.failure(named));
  }

  progress(progress: Progress): void {
    this.line?.onprogress(progress);
  }

  onInput(request: InputRequest, withdrawn: AbortSignal, inferred: boolean): Promise<JsonObject> {
    this.promote();
    if (!this.line) return Promise.reject(new CallStopped("the call ended")); // ended: the peer no longer routes to it
    return this.line.context.onInput(request, withdrawn, inferred);
  }

  onLog(entry: LogEntry): void {
    this.line?.context.onLog?.(entry);
  }

  // --- the client's side ---------------------------------------------------------------------

  /** Shutdown: ends the call now with a shutting-down error and cancels it upstream. */
  async shutDown(): Promise<void> {
    if (!this.end()) return;
    this.stop(SHUTDOWN.abortReason);
    this.answer(this.failure(shuttingDown()));
  }

  private clientGone(): void {
    if (!this.end()) return; // promoted: the InlineCall hears of it itself
    this.options.request.note.outcome = "client_disconnected";
    this.stop("client closed the stream");
    this.answer(errorReply(internalError("the client left before the answer"))); // written to nobody
  }

  // --- internals -------------------------------------------------------------------------------

  /** The full road takes over: a RunningCall adopts the request, an InlineCall answers the client. */
  private promote(): void {
    if (this.state !== "running") return;
    this.state = "promoted";
    this.leave();
    this.answer(this.options.promote((run) => this.adopt(run), performance.now() - this.startedAt));
  }

  /** The RunningCall's runner: from now on its run hears everything, and a stop of it stops the request. */
  private adopt(run: CallRun): Promise<JsonObject> {
    this.line = run;
    run.signal.addEventListener("abort", () => this.direct.stop(new CallStopped(String(run.signal.reason ?? "aborted"))), { once: true });
    return new Promise<JsonObject>((resolve, reject) => (this.adopted = { resolve, reject }));
  }

  /** Running → done; false when it was not running (answered, gone, or promoted). */
  private end(): boolean {
    if (this.state !== "running") return false;
    this.state = "done";
    this.leave();
    return true;
  }

  /** Off the short road's books: its window, the live calls, its quota count. */
  private leave(): void {
    this.window?.cancel();
    this.options.live.delete(this);
    this.options.uncount();
  }

  private stop(reason: string): void {
    const { request, start } = this.options;
    request.log.info({ event: "upstream.call.cancelled", method: start.method, reason }, "upstream call cancelled");
    this.direct.stop(new CallStopped(reason));
  }

  private failure(error: RpcError): Reply {
    const { note } = this.options.request;
    note.outcome = "error";
    noteErrorReason(note, error);
    return errorReply(error);
  }
}
