// server/discover: the upstream's initialize result restated for 2026-07-28, plus the tasks
// extension. listChanged / resources.subscribe are advertised exactly when the upstream offers
// them and its notification stream is open (subscriptions/listen serves them); legacy tasks and
// logging are left out, so what is advertised always works.

import { type JsonObject, META, SUPPORTED_VERSIONS, TASKS_EXTENSION } from "../protocol/wire.js";
import type { UpstreamInfo } from "../upstream/upstreamSession.js";
import { isObject } from "../util/json.js";
import type { CacheHints } from "./relay.js";

/** Where discover tells which protocol the backend behind taskgate speaks (not a reserved MCP prefix). */
export const BACKEND_META = "dev.taskgate/backend";

const flag = (value: unknown, key: string): boolean => isObject(value) && value[key] === true;

/** `notificationStream`: upstream notifications reach taskgate (see UpstreamInfo). */
function modernCapabilities(upstream: JsonObject, notificationStream = false): JsonObject {
  const caps: JsonObject = {};
  const relayed = (value: unknown, ...keys: string[]): JsonObject => {
    const out: JsonObject = {};
    if (notificationStream) for (const key of keys) if (flag(value, key)) out[key] = true;
    return out;
  };
  if (upstream.tools) caps.tools = relayed(upstream.tools, "listChanged");
  if (upstream.prompts) caps.prompts = relayed(upstream.prompts, "listChanged");
  if (upstream.resources) caps.resources = relayed(upstream.resources, "subscribe", "listChanged");
  if (upstream.completions) caps.completions = {};
  caps.extensions = { ...((upstream.extensions as JsonObject | undefined) ?? {}), [TASKS_EXTENSION]: {} };
  return caps;
}

export function discoverResult(info: UpstreamInfo, cache: CacheHints): JsonObject {
  return {
    resultType: "complete",
    supportedVersions: [...SUPPORTED_VERSIONS],
    capabilities: modernCapabilities(info.capabilities, info.notificationStream),
    ...(info.instructions ? { instructions: info.instructions } : {}),
    ttlMs: cache.ttlMs,
    cacheScope: cache.cacheScope,
    _meta: { [META.serverInfo]: info.serverInfo, [BACKEND_META]: { era: "legacy", protocolVersion: info.protocolVersion } },
  };
}

/** Capability flags taskgate relays from a modern backend: its listen stream is not relayed (yet), so no listChanged/subscribe. */
function relayedCapabilities(backend: JsonObject): JsonObject {
  const caps: JsonObject = {};
  for (const [kind, value] of Object.entries(backend)) {
    if (kind === "extensions" || !isObject(value)) continue;
    const { listChanged: _l, subscribe: _s, ...rest } = value;
    caps[kind] = rest;
  }
  caps.extensions = { ...(isObject(backend.extensions) ? backend.extensions : {}), [TASKS_EXTENSION]: {} };
  return caps;
}

/** server/discover in front of a modern backend: its capabilities, extensions and instructions, taskgate's versions and cache hints. */
export function modernDiscoverResult(backend: JsonObject, cache: CacheHints): JsonObject {
  const meta = isObject(backend._meta) ? backend._meta : {};
  return {
    resultType: "complete",
    supportedVersions: [...SUPPORTED_VERSIONS],
    capabilities: relayedCapabilities(isObject(backend.capabilities) ? backend.capabilities : {}),
    ...(typeof backend.instructions === "string" ? { instructions: backend.instructions } : {}),
    ttlMs: cache.ttlMs,
    cacheScope: cache.cacheScope,
    _meta: {
      [META.serverInfo]: meta[META.serverInfo] ?? { name: "taskgate", version: "0.1.0" },
      [BACKEND_META]: { era: "modern", supportedVersions: backend.supportedVersions ?? [] },
    },
  };
}
