// Relays the list/read methods to the upstream and makes the answers 2026-07-28 ones:
// resultType everywhere, ttlMs/cacheScope on cacheable results, no 2025-11-25 `execution`
// on tools, legacy error codes translated; the lists without what access rules hide from the caller.

import type { EntryKind } from "../access/accessRules.js";
import type { UpstreamAccess } from "../access/upstreamAccess.js";
import { ownerHashOf } from "../auth/identity.js";
import { invalidParams } from "../protocol/errors.js";
import { type Reply, resultReply } from "../protocol/reply.js";
import type { JsonObject } from "../protocol/wire.js";
import { profileOf } from "../upstream/capabilityProfile.js";
import type { UpstreamPool } from "../upstream/upstreamPool.js";
import { modernResult } from "../upstream/upstreamResult.js";
import { isObject } from "../util/json.js";
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

/** Where each list keeps its entries, and what names one (access rules filter them). */
export const LISTED: Record<string, { field: string; key: string; kind: EntryKind }> = {
  "tools/list": { field: "tools", key: "name", kind: "tools" },
  "prompts/list": { field: "prompts", key: "name", kind: "prompts" },
  "resources/list": { field: "resources", key: "uri", kind: "resources" },
  "resources/templates/list": { field: "resourceTemplates", key: "uriTemplate", kind: "resources" },
};

/** completion/complete of a prompt or resource template hidden from the caller: refused in the words
 *  an SDK server uses for a reference it does not have. */
export function refuseHiddenReference(request: MethodRequest, policy: UpstreamAccess): void {
  const ref = isObject(request.params.ref) ? request.params.ref : {};
  if (ref.type === "ref/prompt" && typeof ref.name === "string" && !policy.allows(request.identity, "prompts", ref.name)) {
    throw invalidParams(`Prompt ${ref.name} not found`);
  }
  if (ref.type === "ref/resource" && typeof ref.uri === "string" && !policy.allows(request.identity, "resources", ref.uri)) {
    throw invalidParams(`Resource template ${ref.uri} not found`);
  }
}

export function relayHandler(pool: UpstreamPool, cache: CacheHints, policy: UpstreamAccess) {
  return async (request: MethodRequest): Promise<Reply> => {
    const { _meta: _modernMeta, ...params } = request.params;
    if (request.method === "completion/complete") refuseHiddenReference(request, policy);
    if (typeof params.name === "string") request.note.name = params.name;
    if (typeof params.uri === "string") request.note.uri = params.uri;
    const result = await pool.request(ownerHashOf(request.identity), profileOf(request.capabilities), request.method, params);
    const caching = CACHEABLE.has(request.method) ? cache : {};
    const listed = LISTED[request.method];
    const shown = listed
      ? { ...result, [listed.field]: policy.visible(request.identity, listed.kind, result[listed.field], listed.key) }
      : result;
    return resultReply(modernResult(withoutExecution(shown), { ...caching }));
  };
}
