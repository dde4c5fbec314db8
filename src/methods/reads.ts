// prompts/get and resources/read: relayed like the other reads, but as inline calls, because
// MRTR lets these two ask the client questions too (input_required rounds).

import { ownerHashOf } from "../auth/identity.js";
import type { CallQuotas } from "../calls/callQuotas.js";
import { InlineCall } from "../calls/inlineCall.js";
import type { LiveInlineCalls } from "../calls/liveInlineCalls.js";
import type { ParkedCalls } from "../calls/parkedCalls.js";
import type { RemoteRounds } from "../calls/remoteRounds.js";
import { argumentsDigest } from "../calls/requestStateCodec.js";
import { isRetry, presetAnswersOf, resumeParkedCall } from "../calls/resumeParkedCall.js";
import { invalidParams } from "../protocol/errors.js";
import type { Reply } from "../protocol/reply.js";
import { type JsonObject, META } from "../protocol/wire.js";
import { profileOf } from "../upstream/capabilityProfile.js";
import { UpstreamCall } from "../upstream/upstreamCall.js";
import type { UpstreamPool } from "../upstream/upstreamPool.js";
import type { MethodRequest } from "./handler.js";
import { INLINE_JSON_WINDOW_MS, inlineRequestOf } from "./inlineRequest.js";
import type { CacheHints } from "./relay.js";

export function readHandler(
  pool: UpstreamPool,
  parked: ParkedCalls,
  live: LiveInlineCalls,
  rounds: RemoteRounds,
  quotas: CallQuotas,
  cache: CacheHints,
) {
  return async (request: MethodRequest): Promise<Reply> => {
    const nameKey = request.method === "resources/read" ? "uri" : "name";
    const name = request.params[nameKey];
    if (typeof name !== "string" || name.length === 0) throw invalidParams(`params.${nameKey} must be a non-empty string`);
    request.note[nameKey] = name;
    const args = request.method === "prompts/get" ? request.params.arguments : undefined;
    const binding = { owner: ownerHashOf(request.identity), method: request.method, name, args: argumentsDigest(args) };
    const cacheable = request.method === "resources/read";
    if (isRetry(request.params)) {
      // Results of MRTR retries must not be cached.
      const decorate = cacheable ? (r: JsonObject) => ({ ...r, ttlMs: 0, cacheScope: "private" }) : undefined;
      return resumeParkedCall({ ...inlineRequestOf(request), params: request.params }, parked, binding, {
        jsonWindowMs: INLINE_JSON_WINDOW_MS,
        live,
        elsewhere: rounds,
        ...(decorate ? { decorate } : {}),
      });
    }
    const presetAnswers = presetAnswersOf(request.params);
    const upstreamParams: JsonObject = { [nameKey]: name, ...(args !== undefined ? { arguments: args } : {}) };
    const target = {
      pool,
      owner: binding.owner,
      profile: profileOf(request.capabilities),
      relaysLogs: typeof request.meta[META.logLevel] === "string",
    };
    quotas.admit(binding.owner, { task: false, held: true });
    const call = new UpstreamCall(target, request.method, upstreamParams, request.log);
    quotas.track(call, binding.owner, "held");
    const decorate = cacheable ? (r: JsonObject) => ({ ...r, ttlMs: cache.ttlMs, cacheScope: cache.cacheScope }) : undefined;
    const inline = new InlineCall(call, inlineRequestOf(request), {
      parked,
      live,
      binding,
      ...(decorate ? { decorate } : {}),
      ...(presetAnswers ? { presetAnswers } : {}),
    });
    return inline.reply(INLINE_JSON_WINDOW_MS);
  };
}
