// RequestNote: the fields of a request's one log line, written by the parts that serve it (the
// front door, the handler, the call owner, a listen stream) and read once its response ended: the
// line is written from it, and http/requestOutcome.ts reads the requests_total outcome from it. Every
// field is named here, so a word the outcome table does not know cannot be noted.

import type { RpcError } from "./errors.js";
import { isReason } from "./reasons.js";
import type { JsonObject, RequestId, TaskStatus } from "./wire.js";

/** What a handler or the call owner notes about how the request was answered. */
export type NotedOutcome =
  /** The call's own result (ok, or disconnected when the client left before it was written). */
  | "result"
  | "tool_error"
  | "input_required"
  | "task"
  /** A JSON-RPC error reply that was not thrown (the upstream's own error, a refusal on the holder). */
  | "error"
  | "missing_capability"
  | "client_disconnected"
  /** A listen stream: it ends when its client closes it, which is how it is meant to end. */
  | "listen"
  /** A retry for a call whose holder instance is gone. */
  | "holder_gone"
  /** The holder refused a retry forwarded to it (its own request, never a client's). */
  | "refused";

export interface RequestNote {
  /** The front door: why a sent X-Request-Id was replaced. */
  requestIdRefused?: string;
  /** Refused at the door: the refusal's word (or the envelope's JSON-RPC code). */
  rejected?: string | number;
  refusedValue?: string;
  detail?: string;
  subject?: string;
  door?: "legacy";
  notification?: string;
  rpcMethod?: string;
  rpcId?: RequestId;
  /** The JSON-RPC code of a thrown error. */
  error?: number;
  /** error.data.reason of the error reply (catalogued ones decide the outcome, see reasons.ts). */
  reason?: string;
  outcome?: NotedOutcome;
  tool?: string;
  name?: string;
  uri?: string;
  taskId?: string;
  taskStatus?: TaskStatus;
  /** Answers a retry delivered. */
  resumed?: number;
  /** The instance a retry was forwarded to. */
  holder?: string;
  /** The federated endpoint: the backend the request went to. */
  backend?: string;
  /** What a listen stream honours. */
  honoured?: JsonObject;
  /** With tracing on: the request's server span. */
  trace_id?: string;
  span_id?: string;
}

/** Notes the reason of an error reply, when it names one taskgate catalogues. */
export function noteErrorReason(note: RequestNote, error: RpcError): void {
  const reason = (error.data as { reason?: unknown } | undefined)?.reason;
  if (isReason(reason)) note.reason = reason;
}
