// Sends JSON-RPC results and errors as application/json with the right HTTP status.

import type { ServerResponse } from "node:http";
import { RpcError } from "../protocol/errors.js";
import type { JsonObject, RequestId } from "../protocol/wire.js";

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

export const resultMessage = (id: RequestId, result: JsonObject) => ({ jsonrpc: "2.0" as const, id, result });

export const errorMessage = (id: RequestId | null, error: RpcError | { code: number; message: string; data?: unknown }) => ({
  jsonrpc: "2.0" as const,
  id,
  error: error instanceof RpcError ? error.toJSON() : error,
});

export function sendResult(res: ServerResponse, id: RequestId, result: JsonObject): void {
  sendJson(res, 200, resultMessage(id, result));
}

export function sendError(res: ServerResponse, id: RequestId | null, error: RpcError, headers: Record<string, string> = {}): void {
  sendJson(res, error.httpStatus, errorMessage(id, error), headers);
}
