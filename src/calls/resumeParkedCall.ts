// An MRTR retry (a tools/call, prompts/get or resources/read carrying requestState and
// inputResponses) for a call parked on this instance: checks every answer against its question
// before anything is delivered, then resumes the call on this request, hands it to a task, or asks
// again for what is still open. Any refusal leaves the parked call exactly as it was. Finding the
// parked call (or its holder instance) is the call owner's (CallDesk).

import { invalidParams, missingCapability } from "../protocol/errors.js";
import { type Reply, resultReply } from "../protocol/reply.js";
import type { JsonObject } from "../protocol/wire.js";
import { missingCapabilityFor } from "../questions/declaredKinds.js";
import { OpenQuestions } from "../questions/openQuestions.js";
import { isObject } from "../util/json.js";
import { InlineCall, type InlineRequest } from "./inlineCall.js";
import type { LiveInlineCalls } from "./liveInlineCalls.js";
import type { ParkedCall, ParkedCalls } from "./parkedCalls.js";

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

export interface ResumeOptions {
  /** How long a final message may take and still be answered as JSON (Infinity: always JSON). */
  jsonWindowMs: number;
  live: LiveInlineCalls;
  decorate?: ((result: JsonObject) => JsonObject) | undefined;
  /** The call goes on as a task once every question is answered and the answers went upstream
   *  (unset: inline, on this request). */
  asTask?: ((parkedCall: ParkedCall) => Promise<Reply>) | undefined;
}

export async function resumeParkedCall(
  parkedCall: ParkedCall,
  request: InlineRequest,
  parked: ParkedCalls,
  inputResponses: JsonObject,
  options: ResumeOptions,
): Promise<Reply> {
  const { questions } = parkedCall;
  if (parkedCall.finished) {
    // Its questions are moot: the call already has its outcome, which this retry receives.
    parked.consume(parkedCall);
    request.note.resumed = 0;
    return resumeInline(parkedCall, request, parked, [], options);
  }
  const matched = questions.match(inputResponses);
  if (!matched.ok) {
    const retry = "the question stays open; retry with a corrected answer and the same requestState";
    throw invalidParams(`inputResponses.${matched.key}: ${matched.problem} (${retry})`);
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
  if (options.asTask) {
    // Questions asked after the answers wait in the call until its new holder watches it.
    OpenQuestions.deliver(matched.answers);
    return options.asTask(parkedCall);
  }
  return resumeInline(parkedCall, request, parked, matched.answers, options);
}

/** Watches before answering, so a follow-up question is caught by this request. */
function resumeInline(
  parkedCall: ParkedCall,
  request: InlineRequest,
  parked: ParkedCalls,
  answers: Parameters<typeof OpenQuestions.deliver>[0],
  options: ResumeOptions,
): Promise<Reply> {
  const inline = new InlineCall(parkedCall.call, request, {
    parked,
    live: options.live,
    binding: parkedCall.binding,
    resumes: parkedCall,
    ...(options.decorate ? { decorate: options.decorate } : {}),
  });
  OpenQuestions.deliver(answers);
  return inline.reply(options.jsonWindowMs);
}
