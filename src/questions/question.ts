// Question: one server-to-client request (elicitation, sampling, roots) the upstream asked during a
// call and is waiting on. Whoever holds the call answers it or refuses it, once; the upstream may
// withdraw it first (it cancelled its request), which aborts `withdrawn`.

import type { InputRequest, JsonObject, JsonRpcErrorObject } from "../protocol/wire.js";

export interface Question {
  readonly request: InputRequest;
  /** Aborted when the upstream withdraws the question (it cancelled its request). */
  readonly withdrawn: AbortSignal;
  answer(result: JsonObject): void;
  refuse(error: JsonRpcErrorObject): void;
  /** Answered, refused or withdrawn: nothing more can be done with it. */
  readonly settled: boolean;
}
