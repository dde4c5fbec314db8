// Test kit for the legacy door: a real SDK 1.x client (optionally with a bearer token), and raw
// legacy-shaped requests (initialize, a request on a session, GET stream, DELETE) with fetch, for
// the cases a conforming client would never send (another identity's session id, no token).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { framesOfText, isEventStream } from "./sse.js";

export const LEGACY_VERSION = "2025-11-25";

/** An SDK 1.x client connected through the gateway's legacy door. */
export async function connectLegacyClient(
  url: string,
  token?: string,
  headers: Record<string, string> = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: "legacy-door-e2e", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers } },
  });
  await client.connect(transport);
  return { client, transport };
}

export interface LegacyAnswer {
  status: number;
  headers: Headers;
  /** The JSON body, or the last message of an SSE body. */
  message: JsonObject;
}

/** One raw legacy request: POST `body` (or GET/DELETE without one) with an optional token and session. */
export async function legacyRequest(
  url: string,
  options: {
    body?: JsonObject;
    token?: string;
    sessionId?: string;
    method?: "POST" | "GET" | "DELETE";
    headers?: Record<string, string>;
  } = {},
): Promise<LegacyAnswer> {
  const method = options.method ?? "POST";
  const response = await fetch(url, {
    method,
    headers: {
      Accept: method === "GET" ? "text/event-stream" : "application/json, text/event-stream",
      ...(method === "POST" ? { "Content-Type": "application/json" } : {}),
      ...(options.sessionId ? { "Mcp-Session-Id": options.sessionId, "MCP-Protocol-Version": LEGACY_VERSION } : {}),
      ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
    ...(options.body ? { body: JSON.stringify(options.body) } : {}),
  });
  if (method === "GET" && response.status === 200) {
    await response.body?.cancel();
    return { status: 200, headers: response.headers, message: {} };
  }
  const text = await response.text();
  const message = isEventStream(response) ? (framesOfText(text).at(-1) ?? {}) : (JSON.parse(text || "{}") as JsonObject);
  return { status: response.status, headers: response.headers, message };
}

export const legacyInitialize = (id = 1): JsonObject => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: "raw-legacy", version: "1.0.0" } },
});

export const legacyToolsList = (id = 2): JsonObject => ({ jsonrpc: "2.0", id, method: "tools/list", params: {} });
