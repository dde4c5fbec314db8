// Reply: what a method handler returns, and the only thing that reaches the HTTP layer. Exactly one
// of: a JSON-RPC result, a JSON-RPC error, or a stream of JSON-RPC messages (notifications, then the
// final response) that the HTTP layer writes as SSE. A stream also says what to do when the client
// goes away before the stream ended (e.g. cancel the upstream call); the producer ends the stream.

import type { RpcError } from "./errors.js";
import type { JsonObject, JsonRpcErrorObject, RequestId } from "./wire.js";

export type Reply =
  | { kind: "result"; result: JsonObject }
  | { kind: "error"; error: RpcError }
  | { kind: "stream"; messages: AsyncIterable<JsonObject>; onClientGone(): void };

export const resultReply = (result: JsonObject) => ({ kind: "result", result }) satisfies Reply;
export const errorReply = (error: RpcError) => ({ kind: "error", error }) satisfies Reply;

export const resultMessage = (id: RequestId, result: JsonObject): JsonObject => ({ jsonrpc: "2.0", id, result });

export const errorMessage = (id: RequestId | null, error: RpcError | JsonRpcErrorObject): JsonObject => ({
  jsonrpc: "2.0",
  id,
  error: "toJSON" in error ? error.toJSON() : error,
});

export const notificationMessage = (method: string, params: JsonObject): JsonObject => ({ jsonrpc: "2.0", method, params });
