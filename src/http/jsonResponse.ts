// Sends one JSON body (a JSON-RPC response, or a small JSON document) with its HTTP status.

import type { ServerResponse } from "node:http";
import type { RpcError } from "../protocol/errors.js";
import { errorMessage } from "../protocol/reply.js";
import type { RequestId } from "../protocol/wire.js";

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** A JSON-RPC error response, with the HTTP status the error carries. */
export function sendError(res: ServerResponse, id: RequestId | null, error: RpcError, headers: Record<string, string> = {}): void {
  sendJson(res, error.httpStatus, errorMessage(id, error), headers);
}
