// A legacy upstream's result, made a 2026-07-28 one: resultType added, the 2025-11-25
// related-task marker stripped from _meta.

import { type JsonObject, META } from "../protocol/wire.js";

export function modernResult(result: JsonObject, extra?: JsonObject): JsonObject {
  // Copied key by key: every call's result passes here, and a rest pattern ({ _meta, ...rest }) takes V8's slow copy.
  const out: JsonObject = {};
  for (const key in result) if (key !== "_meta") put(out, key, result[key]);
  if (extra) for (const key in extra) put(out, key, extra[key]);
  out.resultType = "complete";
  const meta = result._meta;
  if (meta && typeof meta === "object") {
    const keep: JsonObject = {};
    let kept = false;
    for (const key in meta as JsonObject) {
      if (key === META.relatedTask) continue;
      put(keep, key, (meta as JsonObject)[key]);
      kept = true;
    }
    if (kept) out._meta = keep;
  }
  return out;
}

/** Sets an own property; "__proto__" (a key JSON may carry) as data, never as the object's prototype. */
function put(into: JsonObject, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
  else into[key] = value;
}
