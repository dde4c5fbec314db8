// Ties upstream server-to-client requests (elicitation, sampling, roots) to the call that caused
// them. The legacy SDK client does not say which of its requests a server request belongs to, so
// the session's fetch wrapper reads the SSE stream of each POST and records, for every server
// request it carries, the CallContext that was active (AsyncLocalStorage) when the POST was made.

import { AsyncLocalStorage } from "node:async_hooks";
import type { InputRequest, JsonObject } from "../protocol/wire.js";

export interface CallContext {
  /** Answer a question the upstream asked during this call. Rejects to send an error upstream. */
  onInput(request: InputRequest, signal: AbortSignal): Promise<JsonObject>;
  /** The call's response stream ended (or broke) without its response and cannot be resumed. */
  onStreamLost(why: string): void;
}

export const callContextStorage = new AsyncLocalStorage<CallContext>();
