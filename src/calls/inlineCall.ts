// InlineCall: serves a running upstream call on the client's own request. It produces the message
// sequence of that request — progress notifications (when the request carried a progressToken)
// and upstream log messages (at or above the request's logLevel, when it set one), then exactly
// one final message: the result, a JSON-RPC error, or an MRTR `input_required` result
// (the call is then parked in ParkedCalls and the client's retry resumes it). reply() turns the
// sequence into a Reply: plain JSON when the final message is the first one and comes within the
// JSON window, otherwise a stream. A question already answered by the request's own inputResponses
// is answered without a round; questions a few ms apart are gathered into one round; a question of
// a kind the request did not declare ends the call with -32021. A client that goes away before the
// final message cancels the call upstream.
//
// States: undecided (messages wait in `early`) → json (the final message was first) | streaming
// (messages flow through `stream`); `finished` once the final message was produced or the client left.

import { internalError, invalidRequest, missingCapability, shuttingDown } from "../protocol/errors.js";
import { shouldRelayLog } from "../protocol/logLevels.js";
import { SHUTDOWN } from "../protocol/reasons.js";
import { errorMessage, errorReply, notificationMessage, type Reply, resultMessage, resultReply } from "../protocol/reply.js";
import { noteErrorReason, type RequestNote } from "../protocol/requestNote.js";
import type { ClientCapabilities, JsonObject, RequestId } from "../protocol/wire.js";
import { missingCapabilityFor } from "../questions/declaredKinds.js";
import { OpenQuestions } from "../questions/openQuestions.js";
import type { Question } from "../questions/question.js";
import type { CallOutcome, RunningCall } from "../upstream/upstreamCall.js";
import { modernResult } from "../upstream/upstreamResult.js";
import { AsyncQueue } from "../util/asyncQueue.js";
import type { ClientGone } from "../util/clientGone.js";
import { type Deadline, Deadlines } from "../util/deadlines.js";
import type { Drainable, LiveInlineCalls } from "./liveInlineCalls.js";
import type { CallBinding, ParkedCall, ParkedCalls } from "./parkedCalls.js";

/** The request an inline call answers. */
export interface InlineRequest {
  id: RequestId;
  /** What the client declared on this request: questions of other kinds are never shown. */
  capabilities: ClientCapabilities;
  progressToken?: string | number;
  /** `_meta` logLevel of the request: upstream log messages at or above it are relayed. */
  logLevel?: string;
  /** Tells when the client goes away (the call is then cancelled upstream). */
  gone: ClientGone;
  /** Fields for the request's log line. */
  note: RequestNote;
  /** The MCP path the request came to (a fleet's): a task made of this call answers only there. */
  endpoint?: string | undefined;
}

export interface InlineCallOptions {
  parked: ParkedCalls;
  /** Where live inline calls are tracked (shutdown drains them). */
  live: LiveInlineCalls;
  binding: CallBinding;
  /** Set when this request resumes a parked call. */
  resumes?: ParkedCall;
  /** Extra fields for a complete result (ttlMs/cacheScope on cacheable ones). */
  decorate?: ((result: JsonObject) => JsonObject) | undefined;
  /** Answers the client sent up front (a fresh call with inputResponses). */
  presetAnswers?: JsonObject | undefined;
}

type FinalReply = Extract<Reply, { kind: "result" | "error" }>;
type Outgoing = { kind: "notification"; message: JsonObject } | { kind: "final"; reply: FinalReply };

/** Concurrent questions arrive a few ms apart; gather them into one round. */
const GATHER_MS = 30;

export class InlineCall implements Drainable {
  private mode: "undecided" | "json" | "streaming" = "undecided";
  private readonly early: Outgoing[] = [];
  /** Made when the reply turns into a stream (a quick JSON answer never needs one). */
  private stream?: AsyncQueue<Outgoing>;
  /** Wakes a reply() waiting for the first message (set only while one waits). */
  private firstOut?: (() => void) | undefined;
  private finished = false;
  /** Who waits for the final message (policy auto only): made on demand. */
  private finalWaiters?: Array<() => void>;
  private detached = false;
  private parkedCall?: ParkedCall | undefined;
  private readonly asked: Question[] = [];
  private gather?: NodeJS.Timeout | undefined;
  private readonly stopWatching: () => void;

  constructor(
    private readonly call: RunningCall,
    private readonly request: InlineRequest,
    private readonly options: InlineCallOptions,
  ) {
    this.parkedCall = options.resumes;
    options.live.add(this);
    this.stopWatching = call.watch({
      progress: (progress) => {
        if (request.progressToken === undefined || this.finished) return;
        this.emit({
          kind: "notification",
          message: notificationMessage("notifications/progress", { progressToken: request.progressToken, ...progress }),
        });
      },
      question: (question) => this.onQuestion(question),
      log: (entry) => {
        if (this.finished || !shouldRelayLog(entry.level, request.logLevel)) return;
        const params = { level: entry.level, ...(entry.logger !== undefined ? { logger: entry.logger } : {}), data: entry.data };
        this.emit({ kind: "notification", message: notificationMessage("notifications/message", params) });
      },
    });
    void call.outcome.then((outcome) => this.onOutcome(outcome));
    request.gone.onGone(() => this.clientGone());
  }

  /**
   * For a caller that may also get a task (policy `auto`): whether the call reaches its final
   * message (a result, an error, or a question round) within `ms`. If not, this InlineCall lets go
   * of the call (it stops following it, nothing is cancelled) so a task can take it over; a
   * question that arrived just before the deadline is still asked inline first.
   */
  async finishesWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.whenFinal(), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
    if (this.finished) return true;
    if (this.asked.length > 0) {
      await this.whenFinal(); // the round being gathered
      return true;
    }
    this.detached = true;
    this.letGo();
    return false;
  }

  /** True once finishesWithin() let go of the call (a task holds it now). */
  get isDetached(): boolean {
    return this.detached;
  }

  /** Waits for the first message or the JSON window (Infinity: no window), whichever comes first. */
  async reply(jsonWindowMs: number): Promise<Reply> {
    // One promise woken by the first message or the window's end (nothing to wait for once a message is out).
    if (this.early.length === 0 && !this.finished) {
      let window: Deadline | undefined;
      await new Promise<void>((resolve) => {
        this.firstOut = resolve;
        if (Number.isFinite(jsonWindowMs)) window = Deadlines.of(jsonWindowMs).start(resolve);
      });
      window?.cancel();
      this.firstOut = undefined;
    }
    const first = this.early[0];
    if (first?.kind === "final") {
      this.mode = "json";
      return first.reply;
    }
    this.mode = "streaming";
    const stream = new AsyncQueue<Outgoing>();
    this.stream = stream;
    for (const item of this.early.splice(0)) stream.push(item);
    if (this.finished) stream.end();
    return { kind: "stream", messages: this.messages(stream), onClientGone: () => this.clientGone() };
  }

  private whenFinal(): Promise<void> {
    if (this.finished) return Promise.resolve();
    return new Promise((resolve) => {
      this.finalWaiters ??= [];
      this.finalWaiters.push(resolve);
    });
  }

  private async *messages(stream: AsyncQueue<Outgoing>): AsyncGenerator<JsonObject> {
    const { id } = this.request;
    for await (const item of stream) {
      if (item.kind === "notification") yield item.message;
      else yield item.reply.kind === "result" ? resultMessage(id, item.reply.result) : errorMessage(id, item.reply.error);
    }
  }

  private emit(item: Outgoing): void {
    if (this.mode === "undecided") {
      this.early.push(item);
      this.firstOut?.();
    } else if (this.mode === "streaming") {
      this.stream?.push(item);
    }
  }

  /** Shutdown: ends this call now with a shutting-down error and cancels it upstream. */
  async shutDown(): Promise<void> {
    if (this.finished) return;
    this.call.abort(SHUTDOWN.abortReason);
    this.finish(errorReply(shuttingDown()));
    if (this.stream) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.stream.drained, new Promise((resolve) => (timer = setTimeout(resolve, 1_000)))]);
      clearTimeout(timer);
    }
  }

  private finish(reply: FinalReply): void {
    if (this.finished) return;
    if (reply.kind === "error") noteErrorReason(this.request.note, reply.error);
    this.emit({ kind: "final", reply });
    this.letGo();
  }

  /** The one teardown: the final message was produced, the client left, or a task took the call over. */
  private letGo(): void {
    this.finished = true;
    this.stopWatching();
    clearTimeout(this.gather);
    this.stream?.end();
    for (const wake of this.finalWaiters?.splice(0) ?? []) wake();
    this.options.live.delete(this);
  }

  private clientGone(): void {
    if (this.finished || this.detached) return;
    this.letGo();
    this.firstOut?.(); // a reply() still waiting for its window has nobody to answer
    this.request.note.outcome = "client_disconnected";
    this.call.abort("client closed the stream");
  }

  private onQuestion(question: Question): void {
    if (this.finished) return;
    const missing = missingCapabilityFor(question.request, this.request.capabilities);
    if (missing) {
      question.refuse(invalidRequest("the client did not declare this capability").toJSON());
      this.call.abort("the upstream needs a capability the client did not declare");
      this.request.note.outcome = "missing_capability";
      this.finish(
        errorReply(missingCapability(missing, `the upstream asked for ${question.request.method}, which this request did not declare`)),
      );
      return;
    }
    this.parkedCall ??= this.options.parked.park(this.call, this.options.binding);
    const { questions } = this.parkedCall;
    const key = questions.add(question);
    const preset = this.options.presetAnswers?.[key];
    if (preset !== undefined) {
      const matched = questions.match({ [key]: preset });
      if (matched.ok && matched.answers.length === 1) {
        questions.take(matched.answers);
        OpenQuestions.deliver(matched.answers);
        return;
      }
    }
    this.asked.push(question);
    this.gather ??= setTimeout(() => this.askClient(), GATHER_MS);
  }

  private askClient(): void {
    this.gather = undefined;
    const parkedCall = this.parkedCall;
    if (!parkedCall || this.asked.splice(0).every((question) => question.settled)) return;
    this.request.note.outcome = "input_required";
    this.finish(resultReply(this.options.parked.inputRequired(parkedCall)));
  }

  private onOutcome(outcome: CallOutcome): void {
    const { note } = this.request;
    if (outcome.kind === "result") {
      if (!note.outcome) note.outcome = outcome.result.isError === true ? "tool_error" : "result";
      const result = modernResult(outcome.result);
      this.finish(resultReply(this.options.decorate ? this.options.decorate(result) : result));
    } else if (outcome.kind === "error") {
      note.outcome = "error";
      this.finish(errorReply(outcome.error));
    } else {
      this.finish(errorReply(internalError(`Upstream call stopped: ${outcome.reason}`)));
    }
  }
}
