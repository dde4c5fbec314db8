// Floor "translate": a minimal hand-written 2026-07-28 → legacy gateway. It opens one legacy session
// upstream (initialize, notifications/initialized) and, per request: reads and parses the body,
// checks the protocol-version header against _meta, strips _meta, sends the request upstream on
// that session with a keep-alive undici Agent under an id of its own, reads the SSE answer up to
// the response, and answers the client as JSON with the client's id. What translating costs when
// nothing else is done: no identity, no tasks, no questions, no logs.

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";
import { roleArgs, serveRole } from "../roles/serveRole.js";

type Json = Record<string, unknown>;

await serveRole("translate-floor", async () => {
  const upstream = roleArgs<{ upstream: string }>().upstream;
  const agent = new Agent({ connections: 64, keepAliveTimeout: 4_000 });
  const base = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  const init = await request(upstream, {
    method: "POST",
    headers: base,
    dispatcher: agent,
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
    await request(upstream, { method: "POST", headers, dispatcher: agent, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' })
  ).body.text();
  let nextId = 1;

  const answer = async (text: string, versionHeader: unknown): Promise<{ status: number; body: string }> => {
    const message = JSON.parse(text) as { id: unknown; method: string; params?: Json };
    const { _meta, ...params } = message.params ?? {};
    if ((_meta as Json | undefined)?.["io.modelcontextprotocol/protocolVersion"] !== versionHeader) {
      return { status: 400, body: JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32001, message: "Header mismatch" } }) };
    }
    const id = nextId++;
    const sent = await request(upstream, {
      method: "POST",
      headers,
      dispatcher: agent,
      body: JSON.stringify({ jsonrpc: "2.0", id, method: message.method, params }),
    });
    const sse = await sent.body.text();
    for (const line of sse.split("\n")) {
      if (!line.startsWith("data:")) continue;
      const reply = JSON.parse(line.slice(5)) as Json;
      if (reply.id === id) return { status: 200, body: JSON.stringify({ ...reply, id: message.id }) };
    }
    return { status: 502, body: JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32603, message: "no response" } }) };
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      answer(Buffer.concat(chunks).toString("utf8"), req.headers["mcp-protocol-version"]).then(
        ({ status, body }) =>
          res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body),
        () => res.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    info: { url: `http://127.0.0.1:${port}/mcp`, port },
    close: async () => {
      server.closeAllConnections();
      await agent.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
});
