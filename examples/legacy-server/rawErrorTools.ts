// routeRawTools(mcp, handlers): tools/call for the named tools bypasses McpServer, so what they throw
// leaves as a real JSON-RPC error (SDK 1.x McpServer turns every throw from a registerTool callback
// into {isError: true}; only -32042 passes). Other tools still reach McpServer's handler. Throw
// JsonRpcError: McpError's message carries an "MCP error <code>: " prefix onto the wire.

import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { type CallToolRequest, CallToolRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Extra } from "./toolkit.js";

/** Protocol answers a thrown error with {code: error.code, message: error.message, data: error.data}. */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "JsonRpcError";
  }
}

export type RawToolHandler = (request: CallToolRequest, extra: Extra) => Promise<CallToolResult>;

type InstalledHandler = (request: CallToolRequest, extra: Extra) => Promise<CallToolResult>;

/** McpServer's tools/call handler. The SDK has no public getter, so we read Protocol's handler map. */
function mcpServerToolsCall(mcp: McpServer): InstalledHandler {
  const handlers = (mcp.server as unknown as { _requestHandlers?: Map<string, InstalledHandler> })._requestHandlers;
  const handler = handlers?.get("tools/call");
  if (!handler) throw new Error("SDK layout changed: McpServer's tools/call handler not found (declare the tools capability up front)");
  return handler;
}

export function routeRawTools(mcp: McpServer, handlers: Record<string, RawToolHandler>): void {
  const delegate = mcpServerToolsCall(mcp);
  mcp.server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const raw = Object.hasOwn(handlers, request.params.name) ? handlers[request.params.name] : undefined;
    return raw ? raw(request, extra) : delegate(request, extra);
  });
}
