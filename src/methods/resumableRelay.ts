// prompts/get and resources/read: relayed like the other reads, but through a held upstream
// call, because MRTR lets these two ask the client questions too (input_required rounds).

import { ownerHashOf } from "../auth/identity.js";
import type { Config } from "../config/schema.js";
import { invalidParams } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/wire.js";
import type { HeldCalls } from "../calls/heldCalls.js";
import { respondInline } from "../calls/inlineResponder.js";
import { argumentsDigest } from "../calls/requestStateCodec.js";
import { isRetry, presetAnswersOf, resumeHeldCall } from "../calls/resumeHeldCall.js";
import { INLINE_JSON_WINDOW_MS } from "../calls/toolCall.js";
import { UpstreamCall } from "../calls/upstreamCall.js";
import { profileOf } from "../upstream/capabilityProfile.js";
import type { UpstreamPool } from "../upstream/upstreamPool.js";
import type { HandlerResult, RequestContext } from "./context.js";

export function resumableRelayHandler(pool: UpstreamPool, heldCalls: HeldCalls, cache: Config["cache"]) {
  return async (ctx: RequestContext): Promise<HandlerResult> => {
    const nameKey = ctx.method === "resources/read" ? "uri" : "name";
    const name = ctx.params[nameKey];
    if (typeof name !== "string" || name.length === 0) throw invalidParams(`params.${nameKey} must be a non-empty string`);
    ctx.note[nameKey] = name;
    const args = ctx.method === "prompts/get" ? ctx.params.arguments : undefined;
    const binding = { owner: ownerHashOf(ctx.identity), method: ctx.method, name, args: argumentsDigest(args) };
    const cacheable = ctx.method === "resources/read";
    if (isRetry(ctx.params)) {
      // Results of MRTR retries must not be cached.
      const decorate = cacheable ? (r: JsonObject) => ({ ...r, ttlMs: 0, cacheScope: "private" }) : undefined;
      return resumeHeldCall(ctx, heldCalls, binding, { jsonWindowMs: INLINE_JSON_WINDOW_MS, ...(decorate ? { decorate } : {}) });
    }
    const presetAnswers = presetAnswersOf(ctx.params);
    const upstreamParams: JsonObject = { [nameKey]: name, ...(args !== undefined ? { arguments: args } : {}) };
    const call = new UpstreamCall(pool, profileOf(ctx.capabilities), ctx.method, upstreamParams, ctx.log);
    const decorate = cacheable ? (r: JsonObject) => ({ ...r, ttlMs: cache.ttlMs, cacheScope: cache.cacheScope }) : undefined;
    return respondInline(call, {
      id: ctx.id,
      res: ctx.res,
      jsonWindowMs: INLINE_JSON_WINDOW_MS,
      note: ctx.note,
      capabilities: ctx.capabilities,
      heldCalls,
      binding,
      ...(decorate ? { decorate } : {}),
      ...(presetAnswers ? { presetAnswers } : {}),
    });
  };
}
