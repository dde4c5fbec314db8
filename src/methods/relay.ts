// Relays the list/read methods to the upstream and makes the answers 2026-07-28 ones:
// resultType everywhere, ttlMs/cacheScope on cacheable results, no 2025-11-25 `execution`
// on tools, legacy error codes translated.

import { ownerHashOf } from "../auth/identity.js";
import { type Reply, resultReply } from "../protocol/reply.js";
import type { JsonObject } from "../protocol/wire.js";
import { profileOf } from "../upstream/capabilityProfile.js";
import type { UpstreamPool } from "../upstream/upstreamPool.js";
import { modernResult } from "../upstream/upstreamResult.js";
import type { MethodRequest } from "./handler.js";

const CACHEABLE = new Set(["tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"]);

export interface CacheHints {
  ttlMs: number;
  cacheScope: "public" | "private";
}

function withoutExecution(result: JsonObject): JsonObject {
  if (!Array.isArray(result.tools)) return result;
  return { ...result, tools: (result.tools as JsonObject[]).map(({ execution: _legacy, ...tool }) => tool) };
}

export function relayHandler(pool: UpstreamPool, cache: CacheHints) {
  return async (request: MethodRequest): Promise<Reply> => {
    const { _meta: _modernMeta, ...params } = request.params;
    if (typeof params.name === "string") request.note.name = params.name;
    if (typeof params.uri === "string") request.note.uri = params.uri;
    const result = await pool.request(ownerHashOf(request.identity), profileOf(request.capabilities), request.method, params);
    const caching = CACHEABLE.has(request.method) ? cache : {};
    return resultReply(modernResult(withoutExecution(result), { ...caching }));
  };
}
