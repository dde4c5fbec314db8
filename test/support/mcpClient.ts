// The modern (2026-07-28) MCP client of the tests: builds the headers and body of one request, POSTs
// it to a real taskgate over real HTTP (plain fetch) and reads the whole reply, JSON or SSE (sse.ts).
// Every e2e test speaks to the gateway through this; nothing here is a mock.

import { type JsonObject, PROTOCOL_VERSION, TASKS_EXTENSION } from "../../src/protocol/wire.js";
import { isEventStream, readSse } from "./sse.js";

export const TASKS_CAPS = { extensions: { [TASKS_EXTENSION]: {} } };

export interface RpcOptions {
  token?: string | null;
  capabilities?: JsonObject;
  meta?: JsonObject;
  headers?: Record<string, string | undefined>;
  id?: string | number;
  signal?: AbortSignal;
}

let nextId = 1;

/** Standard headers for a modern request, derived from the body like a conforming client. */
export function modernHeaders(method: string, params: JsonObject, token: string | null = "alice"): Record<string, string> {
  const name = params.name ?? params.uri ?? params.taskId;
  return {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": PROTOCOL_VERSION,
    "Mcp-Method": method,
    ...(typeof name === "string" ? { "Mcp-Name": name } : {}),
    ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
  };
}

export function modernBody(method: string, params: JsonObject, options: RpcOptions = {}): JsonObject {
  return {
    jsonrpc: "2.0",
    id: options.id ?? nextId++,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? {},
        ...options.meta,
      },
    },
  };
}

export interface RpcReply {
  status: number;
  headers: Headers;
  contentType: string;
  /** The final JSON-RPC response (JSON body, or the last response event of an SSE stream). */
  message: JsonObject;
  /** Every message of an SSE response, in order (empty for JSON). */
  events: JsonObject[];
}

/** POSTs one modern request and reads the whole reply (JSON or SSE). */
export async function rpc(url: string, method: string, params: JsonObject = {}, options: RpcOptions = {}): Promise<RpcReply> {
  const headers: Record<string, string> = { ...modernHeaders(method, params, options.token === undefined ? "alice" : options.token) };
  for (const [k, v] of Object.entries(options.headers ?? {})) {
    if (v === undefined) delete headers[k];
    else headers[k] = v;
  }
  const response = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify(modernBody(method, params, options)),
    ...(options.signal ? { signal: options.signal } : {}),
  }).catch((error: unknown) => {
    if (error instanceof Error && error.name === "AbortError") throw error;
    // undici says only "fetch failed"; the cause (ECONNRESET, other side closed…) is what helps.
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
    throw new Error(`${method} to ${url} failed${cause}`, { cause: error });
  });
  return readReply(response);
}

export async function readReply(response: Response): Promise<RpcReply> {
  const contentType = response.headers.get("content-type") ?? "";
  const events: JsonObject[] = [];
  let message: JsonObject = {};
  if (isEventStream(response)) {
    await readSse(response, { onFrame: (frame) => events.push(frame) });
    message = events.findLast((e) => "result" in e || "error" in e) ?? {};
  } else {
    const text = await response.text();
    message = text ? (JSON.parse(text) as JsonObject) : {};
  }
  return { status: response.status, headers: response.headers, contentType, message, events };
}

export const resultOf = (reply: RpcReply) => reply.message.result as JsonObject;
export const errorOf = (reply: RpcReply) => reply.message.error as { code: number; message: string; data?: JsonObject };
