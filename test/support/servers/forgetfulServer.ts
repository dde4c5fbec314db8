// A FAKE 2025-11-25 server that forgets taskgate's session at a moment the test picks (named as such
// in the tests that use it): a real restart gives no control over which of taskgate's requests hears
// of it first. The session the first tools/call comes on is the one forgotten: that call is held;
// forget() closes the session's standalone GET stream, its reconnecting GET is answered 400 "No valid
// session ID provided", and then so is the held call (it never ran). Every other session works
// normally (tools/call `echo` answers its text).

import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { listenOnLoopback } from "./loopbackHttp.js";

export interface ForgetfulServer {
  url: string;
  /** initializes received (one per upstream session taskgate opened) */
  sessions(): number;
  /** Resolves once a tools/call is held on the first session. */
  callHeld(): Promise<void>;
  /** The first session is forgotten: its GET stream closes and its reconnect is refused. */
  forget(): void;
  close(): Promise<void>;
}

const GONE = JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Bad Request: No valid session ID provided" } });

export async function startForgetfulServer(): Promise<ForgetfulServer> {
  const sessionIds: string[] = [];
  const streams = new Map<string, ServerResponse>();
  let victim: string | undefined;
  let forgotten = false;
  let goneSent: () => void = () => undefined;
  const refusedGet = new Promise<void>((resolve) => (goneSent = resolve));
  let held: () => void = () => undefined;
  const heldCall = new Promise<void>((resolve) => (held = resolve));
  const refuse = (res: ServerResponse) => res.writeHead(400, { "content-type": "application/json" }).end(GONE);
  const json = (res: ServerResponse, body: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(200, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));

  const onPost = (req: IncomingMessage, res: ServerResponse, text: string) => {
    const message = JSON.parse(text) as { id?: number; method?: string; params?: { arguments?: { text?: string } } };
    const session = String(req.headers["mcp-session-id"]);
    if (message.method === "initialize") {
      sessionIds.push(randomUUID());
      const result = { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "forgetful", version: "1" } };
      return json(res, { jsonrpc: "2.0", id: message.id, result }, { "mcp-session-id": sessionIds.at(-1)! });
    }
    if (message.id === undefined) return res.writeHead(202).end();
    if (message.method === "tools/list") {
      const tools = [{ name: "echo", inputSchema: { type: "object", properties: { text: { type: "string" } } } }];
      return json(res, { jsonrpc: "2.0", id: message.id, result: { tools } });
    }
    if (message.method === "tools/call" && (victim === undefined || victim === session)) {
      victim = session;
      held();
      return void refusedGet.then(() => refuse(res));
    }
    if (message.method === "tools/call") {
      return json(res, { jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: message.params?.arguments?.text }] } });
    }
    json(res, { jsonrpc: "2.0", id: message.id, result: {} });
  };

  const http = await listenOnLoopback((req, res) => {
    const session = String(req.headers["mcp-session-id"]);
    if (req.method === "GET" && session === victim && forgotten) {
      refuse(res);
      return goneSent();
    }
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "text/event-stream" }).flushHeaders();
      streams.set(session, res);
      return;
    }
    if (req.method === "DELETE") return res.writeHead(200).end();
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (text += chunk));
    req.on("end", () => onPost(req, res, text));
  });
  return {
    url: http.url,
    sessions: () => sessionIds.length,
    callHeld: () => heldCall,
    forget() {
      forgotten = true;
      if (victim) streams.get(victim)?.end();
    },
    close: () => http.close(),
  };
}
