// Relays the list/read methods to the upstream and makes the answers 2026-07-28 ones:
// resultType everywhere, ttlMs/cacheScope on cacheable results, no 2025-11-25 `execution`
// on tools, legacy error codes translated.

import type { Config } from "../config/schema.js";
import { RpcError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/wire.js";
import { toJsonRpcError } from "../calls/upstreamError.js";
import { modernResult } from "../calls/upstreamResult.js";
import { profileOf } from "../upstream/capabilityProfile.js";
import type { UpstreamPool } from "../upstream/upstreamPool.js";
import type { RequestContext } from "./context.js";

const CACHEABLE = new Set(["tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"]);

function withoutExecution(result: JsonObject): JsonObject {
  if (!Array.isArray(result.tools)) return result;
  return { ...result, tools: (result.tools as JsonObject[]).map(({ execution: _legacy, ...tool }) => tool) };
}

export function relayHandler(pool: UpstreamPool, cache: Config["cache"]) {
  return async (ctx: RequestContext): Promise<JsonObject> => {
    const { _meta: _modernMeta, ...params } = ctx.params;
    if (typeof params.name === "string") ctx.note.name = params.name;
    if (typeof params.uri === "string") ctx.note.uri = params.uri;
    let result: JsonObject;
    try {
      result = await pool.request(profileOf(ctx.capabilities), ctx.method, params);
    } catch (error) {
      const rpc = toJsonRpcError(error);
      throw new RpcError(rpc.code, rpc.message, rpc.data);
    }
    const caching = CACHEABLE.has(ctx.method) ? { ttlMs: cache.ttlMs, cacheScope: cache.cacheScope } : {};
    return modernResult(withoutExecution(result), caching);
  };
}
