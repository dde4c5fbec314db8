// What an inline call needs of a method request, and how long a result may take and still be
// answered as plain JSON rather than SSE.

import type { InlineRequest } from "../calls/inlineCall.js";
import type { MethodRequest } from "./handler.js";

/** A quick result within this window is answered as JSON, not SSE. */
export const INLINE_JSON_WINDOW_MS = 250;

export function inlineRequestOf(request: MethodRequest): InlineRequest {
  const token = request.meta.progressToken;
  return {
    id: request.id,
    capabilities: request.capabilities,
    note: request.note,
    ...(typeof token === "string" || typeof token === "number" ? { progressToken: token } : {}),
  };
}
