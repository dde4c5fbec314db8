// The one lean client every case of the "inline" scenario is driven by: raw keep-alive POSTs with
// undici's request() (no SDK client, no fetch), so the figures compare the servers, not clients.
// A case is a prepared request (URL, headers, body with a fresh id per call) and a check of the
// answer; the answer is read as JSON or, when the server streams (SDK 1.x servers always do), as
// SSE up to the response event (the last `data:` line carrying a result or error). Any failure
// throws with what came back, so no failure is averaged into a figure.

import { Agent, request } from "undici";
import { META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, PROTOCOL_VERSION } from "./taskShape.js";

type Json = Record<string, unknown>;

/** Keep-alive connections enough for every call in flight; idle ones dropped after 2 s (see clientDispatcher.ts). */
const agent = new Agent({ connections: 64, keepAliveTimeout: 2_000, keepAliveMaxTimeout: 2_000, pipelining: 1 });

export const LEGACY_VERSION = "2025-11-25";

let nextId = 1;

/** One POST of `message` (its id replaced by a fresh one); resolves with the JSON-RPC response. */
export async function leanPost(url: string, headers: Record<string, string>, message: Json): Promise<Json> {
  message.id = nextId++;
  const {
    statusCode,
    headers: got,
    body,
  } = await request(url, {
    method: "POST",
    headers,
    body: JSON.stringify(message),
    dispatcher: agent,
  });
  const text = await body.text();
  const type = String(got["content-type"] ?? "");
  const reply = type.includes("text/event-stream") ? lastSseResponse(text) : type.includes("json") ? (JSON.parse(text) as Json) : undefined;
  if (statusCode >= 300 || !reply || reply.result === undefined) {
    throw new Error(`${String(message.method)} to ${url}: HTTP ${statusCode} ${type}: ${text.slice(0, 300)}`);
  }
  return reply;
}

/** The response among an SSE body's events (data lines are whole JSON messages for MCP servers). */
function lastSseResponse(text: string): Json | undefined {
  let found: Json | undefined;
  for (const line of text.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const data = line.slice(5).trim();
    if (data === "") continue;
    const message = JSON.parse(data) as Json;
    if ("result" in message || "error" in message) found = message;
  }
  return found;
}

const GREET_ARGS = { name: "greet", arguments: { name: "bench" } };

function checkGreet(reply: Json, where: string): void {
  const content = (reply.result as { content?: Array<{ text?: string }> }).content;
  if (content?.[0]?.text !== "Hello, bench!") throw new Error(`greet via ${where}: unexpected ${JSON.stringify(reply).slice(0, 200)}`);
}

/** A legacy (2025-11-25) session on `url`: initialize + notifications/initialized; resolves with its headers for later calls. */
export async function openLegacySession(url: string, extra: Record<string, string> = {}): Promise<Record<string, string>> {
  const base = { "content-type": "application/json", accept: "application/json, text/event-stream", ...extra };
  const { headers, body } = await request(url, {
    method: "POST",
    headers: base,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: LEGACY_VERSION, capabilities: {}, clientInfo: { name: "bench-lean", version: "1" } },
    }),
    dispatcher: agent,
  });
  await body.text();
  const session = headers["mcp-session-id"];
  if (typeof session !== "string") throw new Error(`initialize at ${url}: no Mcp-Session-Id in the answer`);
  const sessionHeaders = { ...base, "mcp-session-id": session, "mcp-protocol-version": LEGACY_VERSION };
  const note = await request(url, {
    method: "POST",
    headers: sessionHeaders,
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    dispatcher: agent,
  });
  await note.body.text();
  return sessionHeaders;
}

/** tools/call greet as a legacy client sends it on an open session (direct, through a proxy, or taskgate's legacy door);
 *  `askProgress`: with a progressToken in its _meta, as taskgate sends a call whose progress someone reads. */
export function legacyGreet(url: string, sessionHeaders: Record<string, string>, askProgress = false): () => Promise<void> {
  let token = 0;
  const params = () => (askProgress ? { ...GREET_ARGS, _meta: { progressToken: ++token } } : GREET_ARGS);
  return async () => checkGreet(await leanPost(url, sessionHeaders, { jsonrpc: "2.0", method: "tools/call", params: params() }), url);
}

/** The headers a 2026-07-28 client sends with `method` (on `name`), demo bearer token `token`. */
export function modernHeaders(method: string, name: string | undefined, token = "bench"): Record<string, string> {
  return {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": PROTOCOL_VERSION,
    "mcp-method": method,
    ...(name !== undefined ? { "mcp-name": name } : {}),
    authorization: `Bearer ${token}`,
  };
}

/** tools/call greet as a 2026-07-28 client sends it, no extension declared (answered inline). */
export function modernGreet(url: string, token = "bench"): () => Promise<void> {
  const headers = modernHeaders("tools/call", "greet", token);
  return async () =>
    checkGreet(
      await leanPost(url, headers, {
        jsonrpc: "2.0",
        method: "tools/call",
        params: { ...GREET_ARGS, _meta: { [META_PROTOCOL_VERSION]: PROTOCOL_VERSION, [META_CLIENT_CAPABILITIES]: {} } },
      }),
      url,
    );
}

/** server/discover as a 2026-07-28 client sends it. */
export function modernDiscover(url: string): () => Promise<void> {
  const headers = modernHeaders("server/discover", undefined);
  return async () => {
    await leanPost(url, headers, {
      jsonrpc: "2.0",
      method: "server/discover",
      params: { _meta: { [META_PROTOCOL_VERSION]: PROTOCOL_VERSION, [META_CLIENT_CAPABILITIES]: {} } },
    });
  };
}

/** tools/list as a legacy client sends it on an open session; checks that greet is listed. */
export function legacyList(url: string, sessionHeaders: Record<string, string>): () => Promise<void> {
  return async () => checkList(await leanPost(url, sessionHeaders, { jsonrpc: "2.0", method: "tools/list", params: {} }), url);
}

/** tools/list as a 2026-07-28 client sends it; checks that greet is listed. */
export function modernList(url: string): () => Promise<void> {
  const headers = modernHeaders("tools/list", undefined);
  return async () =>
    checkList(
      await leanPost(url, headers, {
        jsonrpc: "2.0",
        method: "tools/list",
        params: { _meta: { [META_PROTOCOL_VERSION]: PROTOCOL_VERSION, [META_CLIENT_CAPABILITIES]: {} } },
      }),
      url,
    );
}

function checkList(reply: Json, where: string): void {
  const tools = (reply.result as { tools?: Array<{ name?: string }> }).tools;
  if (!tools?.some((tool) => tool.name === "greet"))
    throw new Error(`tools/list via ${where}: no greet in ${JSON.stringify(reply).slice(0, 200)}`);
}
