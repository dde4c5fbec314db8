// Question: one server-to-client request (elicitation, sampling, roots) the upstream asked during a
// call and is waiting on. Whoever holds the call answers it or refuses it, once; the upstream may
// withdraw it first (it cancelled its request, or its session ended), which aborts `withdrawn`.

import type { InputRequest, JsonObject, JsonRpcErrorObject } from "../protocol/wire.js";

export interface Question {
  readonly request: InputRequest;
  /** Aborted when the upstream withdraws the question: it cancelled its request, or (reason SESSION_ENDED) its session ended. */
  readonly withdrawn: AbortSignal;
  answer(result: JsonObject): void;
  refuse(error: JsonRpcErrorObject): void;
  /** Answered, refused or withdrawn: nothing more can be done with it. */
  readonly settled: boolean;
}

/**
 * The reason `withdrawn` carries when the question's session ended: every call on the session fails
 * with it, so the question's call ends too, and that end is what its holder records (not a question
 * gone while the call goes on).
 */
export const SESSION_ENDED: Error = new Error("the upstream session ended");
