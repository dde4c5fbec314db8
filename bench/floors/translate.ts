// Floor "translate": the cheapest honest 2026-07-28 → legacy gateway. It opens one legacy session
// upstream (initialize, notifications/initialized) and, per request: reads and parses the body,
// checks the protocol-version header against _meta, strips _meta, sends the request upstream on
// that session under an id of its own (undici's dispatch with callbacks on a keep-alive pool, as
// taskgate sends a call), reads the SSE answer as it comes and answers the client as JSON with the
// client's id as soon as the response event is in. What translating costs when nothing else is
// done: no identity, no tasks, no questions, no logs, no promise per call.

import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type Dispatcher, Pool, request } from "undici";
import { roleArgs, serveRole } from "../roles/serveRole.js";

type Json = Record<string, unknown>;

function reply(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
}

await serveRole("translate-floor", async () => {
  const upstream = new URL(roleArgs<{ upstream: string }>().upstream);
  const pool = new Pool(upstream.origin, { connections: 64, keepAliveTimeout: 4_000 });
  const base = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  const init = await request(upstream, {
    method: "POST",
    headers: base,
    dispatcher: pool,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "translate-floor", version: "1" } },
    }),
  });
  await init.body.text();
  const headers = { ...base, "mcp-session-id": String(init.headers["mcp-session-id"]), "mcp-protocol-version": "2025-11-25" };
  await (
    await request(upstream, { method: "POST", headers, dispatcher: pool, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' })
  ).body.text();
  const path = upstream.pathname;
  let nextId = 1;

  /** One call's SSE answer: the response event's message goes to the client the moment it is read. */
  const exchange = (id: number, clientId: unknown, res: ServerResponse): Dispatcher.DispatchHandler => {
    let text = "";
    let answered = false;
    return {
      onConnect() {},
      onHeaders: () => true,
      onData(chunk: Buffer) {
        if (answered) return true;
        text += chunk.toString("utf8");
        for (let end = text.indexOf("\n\n"); end !== -1; end = text.indexOf("\n\n")) {
          const event = text.slice(0, end);
          text = text.slice(end + 2);
          for (const line of event.split("\n")) {
            if (!line.startsWith("data:")) continue;
            const message = JSON.parse(line.slice(5)) as Json;
            if (message.id !== id) continue;
            answered = true;
            message.id = clientId;
            reply(res, 200, JSON.stringify(message));
            return true;
          }
        }
        return true;
      },
      onComplete() {
        if (!answered) reply(res, 502, JSON.stringify({ jsonrpc: "2.0", id: clientId, error: { code: -32603, message: "no response" } }));
      },
      onError() {
        if (!answered) res.writeHead(502).end();
      },
    };
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: unknown; method: string; params?: Json };
      const { _meta, ...params } = message.params ?? {};
      if ((_meta as Json | undefined)?.["io.modelcontextprotocol/protocolVersion"] !== req.headers["mcp-protocol-version"]) {
        return reply(res, 400, JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32001, message: "Header mismatch" } }));
      }
      const id = nextId++;
      const body = JSON.stringify({ jsonrpc: "2.0", id, method: message.method, params });
      pool.dispatch({ path, method: "POST", headers, body }, exchange(id, message.id, res));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    info: { url: `http://127.0.0.1:${port}/mcp`, port },
    close: async () => {
      server.closeAllConnections();
      await pool.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
});
