// Turns whatever an upstream request threw into the JSON-RPC error a 2026-07-28 client gets:
// legacy codes are translated (-32002 resource-not-found becomes -32602), transport failures
// become -32603 with a message naming the upstream problem.

import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, LEGACY_RESOURCE_NOT_FOUND } from "../protocol/errors.js";
import type { JsonRpcErrorObject } from "../protocol/wire.js";

export function toJsonRpcError(error: unknown): JsonRpcErrorObject {
  if (error instanceof McpError) {
    const code = error.code === LEGACY_RESOURCE_NOT_FOUND ? ErrorCode.InvalidParams : error.code;
    // The SDK prefixes "MCP error <code>: "; the client wants the upstream's own words.
    const message = error.message.replace(/^MCP error -?\d+: /, "");
    return error.data === undefined ? { code, message } : { code, message, data: error.data };
  }
  if (error instanceof StreamableHTTPError) {
    return { code: ErrorCode.InternalError, message: `Upstream server answered HTTP ${error.code ?? "error"}: ${error.message}` };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: ErrorCode.InternalError, message: `Upstream server unavailable: ${message}` };
}
