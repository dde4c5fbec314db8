// server/discover: the upstream's initialize result restated for 2026-07-28, plus the tasks
// extension. Capabilities taskgate cannot honour yet (list-change and resource subscriptions,
// legacy tasks, logging) are left out, so what is advertised always works.

import type { Config } from "../config/schema.js";
import { META, SUPPORTED_VERSIONS, TASKS_EXTENSION, type JsonObject } from "../protocol/wire.js";
import type { UpstreamInfo } from "../upstream/upstreamSession.js";

export function modernCapabilities(upstream: JsonObject): JsonObject {
  const caps: JsonObject = {};
  if (upstream.tools) caps.tools = {};
  if (upstream.prompts) caps.prompts = {};
  if (upstream.resources) caps.resources = {};
  if (upstream.completions) caps.completions = {};
  caps.extensions = { ...((upstream.extensions as JsonObject | undefined) ?? {}), [TASKS_EXTENSION]: {} };
  return caps;
}

export function discoverResult(info: UpstreamInfo, cache: Config["cache"]): JsonObject {
  return {
    resultType: "complete",
    supportedVersions: [...SUPPORTED_VERSIONS],
    capabilities: modernCapabilities(info.capabilities),
    ...(info.instructions ? { instructions: info.instructions } : {}),
    ttlMs: cache.ttlMs,
    cacheScope: cache.cacheScope,
    _meta: { [META.serverInfo]: info.serverInfo },
  };
}
