// What an inline call needs of a method request, and how long a result may take and still be
// answered as plain JSON rather than SSE.

import type { InlineRequest } from "../calls/inlineCall.js";
import { META } from "../protocol/wire.js";
import type { MethodRequest } from "./handler.js";

/** A quick result within this window is answered as JSON, not SSE. */
export const INLINE_JSON_WINDOW_MS = 250;

export function inlineRequestOf(request: MethodRequest): InlineRequest {
  const token = request.meta.progressToken;
  const logLevel = request.meta[META.logLevel];
  return {
    id: request.id,
    capabilities: request.capabilities,
    note: request.note,
    signal: request.signal,
    ...(typeof token === "string" || typeof token === "number" ? { progressToken: token } : {}),
    ...(typeof logLevel === "string" ? { logLevel } : {}),
  };
}
