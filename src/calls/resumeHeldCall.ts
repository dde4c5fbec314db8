// An MRTR retry (a tools/call, prompts/get or resources/read carrying requestState and
// inputResponses): finds the held call, checks every answer against its question before
// anything is delivered, then resumes the call on this request — or asks again for what is
// still open. Any refusal leaves the held call exactly as it was.

import { invalidParams, missingCapability } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/wire.js";
import type { HandlerResult, RequestContext } from "../methods/context.js";
import { missingCapabilityFor } from "./declaredKinds.js";
import type { CallBinding, HeldCalls } from "./heldCalls.js";
import { inputRequiredResult, respondInline } from "./inlineResponder.js";
import { checkInputResponse } from "../questions/inputResponseCheck.js";
import type { Question } from "./upstreamCall.js";

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** A retry carries requestState. inputResponses alone is a fresh call with answers up front. */
export function isRetry(params: JsonObject): boolean {
  return params.requestState !== undefined;
}

/** The answers a fresh call sent up front; anything but an object is refused. */
export function presetAnswersOf(params: JsonObject): JsonObject | undefined {
  const { inputResponses } = params;
  if (inputResponses === undefined) return undefined;
  if (!isObject(inputResponses)) throw invalidParams("params.inputResponses must be an object mapping inputRequests keys to answers");
  return inputResponses;
}

export async function resumeHeldCall(
  ctx: RequestContext,
  heldCalls: HeldCalls,
  binding: CallBinding,
  options: { jsonWindowMs: number; decorate?: (result: JsonObject) => JsonObject },
): Promise<HandlerResult> {
  const { requestState } = ctx.params;
  const inputResponses = presetAnswersOf(ctx.params) ?? {};
  const held = heldCalls.find(requestState, binding);

  const answers: Array<[string, Question, JsonObject]> = [];
  for (const [key, question] of held.questions) {
    if (question.settled || !(key in inputResponses)) continue;
    const problem = checkInputResponse(question.request, inputResponses[key]);
    if (problem) {
      throw invalidParams(`inputResponses.${key}: ${problem} (the question stays open; retry with a corrected answer and the same requestState)`);
    }
    answers.push([key, question, inputResponses[key] as JsonObject]);
  }
  // A question left open is shown again on this request: only if THIS request declared its kind.
  for (const [key, question] of held.questions) {
    if (question.settled || answers.some(([k]) => k === key)) continue;
    const missing = missingCapabilityFor(question.request, ctx.capabilities);
    if (missing) {
      throw missingCapability(missing, `inputRequests.${key} (${question.request.method}) is still open and this request did not declare it`);
    }
  }
  heldCalls.consume(held);
  ctx.note.resumed = answers.length;

  const deliver = () => {
    for (const [key, question, answer] of answers) {
      held.questions.delete(key);
      question.answer(answer);
    }
  };
  const stillOpen = [...held.questions.entries()].some(([key, q]) => !q.settled && !answers.some(([k]) => k === key));
  if (stillOpen) {
    deliver();
    ctx.note.outcome = "input_required";
    return inputRequiredResult(heldCalls, held);
  }
  // Watch before answering, so a follow-up question is caught by this request.
  const responding = respondInline(held.call, {
    id: ctx.id,
    ...(typeof ctx.meta.progressToken === "string" || typeof ctx.meta.progressToken === "number" ? { progressToken: ctx.meta.progressToken } : {}),
    res: ctx.res,
    jsonWindowMs: options.jsonWindowMs,
    note: ctx.note,
    capabilities: ctx.capabilities,
    heldCalls,
    binding,
    held,
    ...(options.decorate ? { decorate: options.decorate } : {}),
  });
  deliver();
  return responding;
}
