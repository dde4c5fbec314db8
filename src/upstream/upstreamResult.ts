// A legacy upstream's result, made a 2026-07-28 one: resultType added, the 2025-11-25
// related-task marker stripped from _meta.

import { type JsonObject, META } from "../protocol/wire.js";

export function modernResult(result: JsonObject, extra: JsonObject = {}): JsonObject {
  const { _meta, ...rest } = result;
  const out: JsonObject = { ...rest, ...extra, resultType: "complete" };
  if (_meta && typeof _meta === "object") {
    const { [META.relatedTask]: _related, ...keep } = _meta as JsonObject;
    if (Object.keys(keep).length > 0) out._meta = keep;
  }
  return out;
}
