// An MRTR retry (a tools/call, prompts/get or resources/read carrying requestState and
// inputResponses): finds the parked call, checks every answer against its question before
// anything is delivered, then resumes the call on this request — or asks again for what is
// still open. Any refusal leaves the parked call exactly as it was. A call another instance holds
// (the requestState names its holder) is resumed there, through `elsewhere`.

import { invalidParams, missingCapability } from "../protocol/errors.js";
import { type Reply, resultReply } from "../protocol/reply.js";
import type { JsonObject } from "../protocol/wire.js";
import { missingCapabilityFor } from "../questions/declaredKinds.js";
import { OpenQuestions } from "../questions/openQuestions.js";
import { isObject } from "../util/json.js";
import { InlineCall, type InlineRequest } from "./inlineCall.js";
import type { LiveInlineCalls } from "./liveInlineCalls.js";
import type { CallBinding, ParkedCall, ParkedCalls } from "./parkedCalls.js";

/** A retry carries requestState. inputResponses alone is a fresh call with answers up front. */
export function isRetry(params: JsonObject): boolean {
  return params.requestState !== undefined;
}

/** The answers a request sent (a retry's, or a fresh call's up front); anything but an object is refused. */
export function presetAnswersOf(params: JsonObject): JsonObject | undefined {
  const { inputResponses } = params;
  if (inputResponses === undefined) return undefined;
  if (!isObject(inputResponses)) throw invalidParams("params.inputResponses must be an object mapping inputRequests keys to answers");
  return inputResponses;
}

/** Sends a retry to the instance holding its call and answers with what that call does next. */
export interface RetryForwarder {
  forward(
    holder: string,
    request: InlineRequest & { params: JsonObject },
    binding: CallBinding,
    inputResponses: JsonObject,
    options: { asTask: boolean; jsonWindowMs: number; decorate?: (result: JsonObject) => JsonObject },
  ): Promise<Reply>;
}

export interface ResumeOptions {
  /** How long a final message may take and still be answered as JSON (Infinity: always JSON). */
  jsonWindowMs: number;
  live: LiveInlineCalls;
  decorate?: (result: JsonObject) => JsonObject;
  /** The call goes on as a task once every question is answered and the answers went upstream
   *  (default: inline, on this request). A call held elsewhere goes on as a task there. */
  respond?: (parkedCall: ParkedCall) => Promise<Reply>;
  /** Where retries for calls other instances hold go (unset: only calls parked here are found). */
  elsewhere?: RetryForwarder;
}

export async function resumeParkedCall(
  request: InlineRequest & { params: JsonObject },
  parked: ParkedCalls,
  binding: CallBinding,
  options: ResumeOptions,
): Promise<Reply> {
  const inputResponses = presetAnswersOf(request.params) ?? {};
  const located = options.elsewhere
    ? parked.locate(request.params.requestState, binding)
    : { here: parked.find(request.params.requestState, binding) };
  if ("elsewhere" in located) return forward(located.elsewhere, request, binding, inputResponses, options);
  const parkedCall = located.here;
  const { questions } = parkedCall;

  const matched = questions.match(inputResponses);
  if (!matched.ok) {
    throw invalidParams(
      `inputResponses.${matched.key}: ${matched.problem} (the question stays open; retry with a corrected answer and the same requestState)`,
    );
  }
  const stillOpen = questions.remainingAfter(matched.answers);
  // A question left open is shown again on this request: only if THIS request declared its kind.
  for (const [key, question] of stillOpen) {
    const missing = missingCapabilityFor(question.request, request.capabilities);
    if (missing) {
      throw missingCapability(
        missing,
        `inputRequests.${key} (${question.request.method}) is still open and this request did not declare it`,
      );
    }
  }
  parked.consume(parkedCall);
  request.note.resumed = matched.answers.length;
  questions.take(matched.answers);

  if (stillOpen.length > 0) {
    OpenQuestions.deliver(matched.answers);
    request.note.outcome = "input_required";
    return resultReply(parked.inputRequired(parkedCall));
  }
  if (options.respond) {
    // Questions asked after the answers wait in the call until its new holder watches it.
    OpenQuestions.deliver(matched.answers);
    return options.respond(parkedCall);
  }
  // Watch before answering, so a follow-up question is caught by this request.
  const inline = new InlineCall(parkedCall.call, request, {
    parked,
    live: options.live,
    binding,
    resumes: parkedCall,
    ...(options.decorate ? { decorate: options.decorate } : {}),
  });
  OpenQuestions.deliver(matched.answers);
  return inline.reply(options.jsonWindowMs);
}

function forward(
  holder: string,
  request: InlineRequest & { params: JsonObject },
  binding: CallBinding,
  inputResponses: JsonObject,
  options: ResumeOptions,
): Promise<Reply> {
  const { elsewhere, jsonWindowMs, decorate } = options;
  if (!elsewhere) throw new Error("a retry for a call held elsewhere needs options.elsewhere");
  return elsewhere.forward(holder, request, binding, inputResponses, {
    asTask: options.respond !== undefined,
    jsonWindowMs,
    ...(decorate ? { decorate } : {}),
  });
}
