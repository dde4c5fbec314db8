// Serves a running upstream call on the client's own HTTP request: JSON when the result comes
// quickly, otherwise an SSE stream with the request's progress and then the result. When the
// upstream asks, the call is held and the client gets an MRTR `input_required` result (all
// questions open at that moment, and a sealed requestState); its retry resumes the call. A
// question already answered by the request's own inputResponses is answered without a round.
// A client that goes away while the call runs cancels it upstream.

import type { ServerResponse } from "node:http";
import { ErrorCode, missingCapability } from "../protocol/errors.js";
import type { ClientCapabilities, JsonObject, RequestId } from "../protocol/wire.js";
import { errorMessage, resultMessage, sendJson } from "../http/rpcResponse.js";
import { SseWriter } from "../http/sseWriter.js";
import { STREAMED, type HandlerResult } from "../methods/context.js";
import { missingCapabilityFor } from "./declaredKinds.js";
import { checkInputResponse } from "../questions/inputResponseCheck.js";
import type { CallBinding, HeldCall, HeldCalls } from "./heldCalls.js";
import type { Question, UpstreamCall } from "./upstreamCall.js";
import { modernResult } from "./upstreamResult.js";

export interface InlineOptions {
  id: RequestId;
  progressToken?: string | number;
  res: ServerResponse;
  /** How long a result may take and still be answered as plain JSON. */
  jsonWindowMs: number;
  note: Record<string, unknown>;
  /** What the client declared on this request: questions of other kinds are never shown. */
  capabilities: ClientCapabilities;
  heldCalls: HeldCalls;
  binding: CallBinding;
  /** Set when this request resumes a held call. */
  held?: HeldCall;
  /** Extra fields for a complete result (ttlMs/cacheScope on cacheable ones). */
  decorate?: (result: JsonObject) => JsonObject;
  /** Answers the client sent up front (a fresh call with inputResponses): a question whose key
   *  has a fitting answer here is answered without a round. */
  presetAnswers?: JsonObject;
}

/** Concurrent questions arrive a few ms apart; gather them into one round. */
const GATHER_MS = 30;

export function inputRequiredResult(heldCalls: HeldCalls, held: HeldCall): JsonObject {
  return { resultType: "input_required", inputRequests: heldCalls.openRequests(held), requestState: heldCalls.issueRound(held) };
}

export function respondInline(call: UpstreamCall, options: InlineOptions): Promise<HandlerResult> {
  const { id, progressToken, res, heldCalls } = options;
  let held = options.held;
  let sse: SseWriter | undefined;
  const pending: unknown[] = [];
  const asked: Question[] = [];
  let gather: NodeJS.Timeout | undefined;
  let done = false;
  let resolveDone: (r: HandlerResult) => void = () => undefined;
  const finished = new Promise<HandlerResult>((r) => (resolveDone = r));

  const openStream = () => {
    if (sse || done || res.headersSent) return;
    sse = new SseWriter(res);
    for (const message of pending.splice(0)) sse.send(message);
  };

  /** `status` applies only while nothing was streamed yet (an SSE response is already 200). */
  const finishWith = (message: unknown, status = 200) => {
    if (done) return;
    done = true;
    stopWatching();
    clearTimeout(timer);
    clearTimeout(gather);
    if (sse) {
      sse.send(message);
      sse.end();
    } else if (!res.headersSent) {
      sendJson(res, status, message);
    }
    resolveDone(STREAMED);
  };

  const askClient = () => {
    if (!held || asked.splice(0).every((question) => question.settled)) {
      gather = undefined;
      return;
    }
    options.note.outcome = "input_required";
    finishWith(resultMessage(id, inputRequiredResult(heldCalls, held)));
  };

  const stopWatching = call.watch({
    progress: (p) => {
      if (progressToken === undefined || done) return;
      const message = { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken, ...p } };
      if (sse) sse.send(message);
      else pending.push(message);
      openStream();
    },
    question: (question) => {
      if (done) return;
      const missing = missingCapabilityFor(question.request, options.capabilities);
      if (missing) {
        question.refuse({ code: ErrorCode.InvalidRequest, message: "the client did not declare this capability" });
        call.abort("the upstream needs a capability the client did not declare");
        options.note.outcome = "missing_capability";
        const error = missingCapability(missing, `the upstream asked for ${question.request.method}, which this request did not declare`);
        finishWith(errorMessage(id, error), error.httpStatus);
        return;
      }
      held ??= heldCalls.hold(call, options.binding);
      const key = heldCalls.addQuestion(held, question);
      const preset = options.presetAnswers?.[key];
      if (preset !== undefined && checkInputResponse(question.request, preset) === undefined) {
        held.questions.delete(key);
        question.answer(preset as JsonObject);
        return;
      }
      asked.push(question);
      gather ??= setTimeout(askClient, GATHER_MS);
    },
  });

  const timer = setTimeout(openStream, options.jsonWindowMs);
  res.on("close", () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    clearTimeout(gather);
    stopWatching();
    sse?.end();
    options.note.outcome = "client_disconnected";
    call.abort("client closed the stream");
    resolveDone(STREAMED);
  });

  void call.outcome.then((outcome) => {
    if (outcome.kind === "result") {
      if (!options.note.outcome) options.note.outcome = outcome.result.isError === true ? "tool_error" : "result";
      const result = modernResult(outcome.result);
      finishWith(resultMessage(id, options.decorate ? options.decorate(result) : result));
    } else if (outcome.kind === "error") {
      options.note.outcome = "error";
      finishWith(errorMessage(id, outcome.error));
    } else {
      finishWith(errorMessage(id, { code: ErrorCode.InternalError, message: `Upstream call stopped: ${outcome.reason}` }));
    }
  });
  return finished;
}
