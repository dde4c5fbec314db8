// An upstream that answers on an SSE stream and then leaves the stream open, in either era. The
// spec says a server SHOULD close it after the response; one that does not must not cost taskgate a
// connection per request, nor get the next request written onto a connection whose stream is still
// open. A FAKE upstream (no real server leaves its streams open on demand): 2026-07-28, it answers
// server/discover as JSON; 2025-11-25, initialize as JSON with a session id, notifications with 202;
// in both, every other request as SSE held open (its tool `hang` opens the stream and never
// answers). It counts its open streams.

import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { after, before, describe, it } from "node:test";
import type { Gateway } from "../../src/gateway.js";
import { ModernLink } from "../../src/upstream/modernLink.js";
import { UpstreamFailure } from "../../src/upstream/upstreamFailure.js";
import { startGatewayInFront } from "../support/gatewayInFront.js";
import { TASKS_CAPS } from "../support/mcpClient.js";
import { call, callTool, expectComplete, expectTask, textOf } from "../support/realServerCalls.js";
import { type LoopbackHttp, listenOnLoopback } from "../support/servers/loopbackHttp.js";
import { until, within } from "../support/waiting.js";

type Message = { id?: string | number; method?: string; params?: { name?: string; arguments?: { text?: string } } };

interface StreamHoldingBackend extends LoopbackHttp {
  /** The methods whose SSE streams it holds open now. */
  readonly openStreams: string[];
  /** Requests that arrived on a connection while an earlier stream on it was still open. */
  readonly onBusyConnection: number;
}

async function startStreamHoldingBackend(era: "modern" | "legacy" = "modern"): Promise<StreamHoldingBackend> {
  let onBusyConnection = 0;
  const open = new Map<ServerResponse, string>();
  const busy = new WeakSet<object>();
  const http = await listenOnLoopback((req, res) => {
    if (req.method === "DELETE") return void res.writeHead(200).end();
    if (req.method !== "POST") return void res.writeHead(405).end();
    if (busy.has(req.socket)) onBusyConnection++;
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Message;
      const answer = (result: object) => ({
        jsonrpc: "2.0",
        id: message.id,
        result: era === "modern" ? { resultType: "complete", ...result } : result,
      });
      if (era === "legacy" && message.id === undefined) return void res.writeHead(202).end();
      if (era === "legacy" && message.method === "initialize") {
        const initialized = answer({
          protocolVersion: "2025-11-25",
          capabilities: { tools: {} },
          serverInfo: { name: "stream-holder", version: "1" },
        });
        return void res
          .writeHead(200, { "content-type": "application/json", "mcp-session-id": `s-${Math.random().toString(36).slice(2)}` })
          .end(JSON.stringify(initialized));
      }
      if (era === "modern" && message.method === "server/discover") {
        const discover = answer({ supportedVersions: ["2026-07-28"], capabilities: { tools: {} }, ttlMs: 0, cacheScope: "public" });
        return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(discover));
      }
      const result =
        message.method === "tools/list"
          ? {
              tools: [
                { name: "echo", inputSchema: { type: "object", properties: { text: { type: "string" } } } },
                { name: "hang", inputSchema: { type: "object" } },
              ],
            }
          : message.method === "tools/call"
            ? { content: [{ type: "text", text: `echo: ${message.params?.arguments?.text ?? ""}` }] }
            : message.method === "ping"
              ? {}
              : undefined;
      if (!result)
        return void res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } }));
      // The response, then nothing: the stream stays open until the other side closes it.
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const hangs = message.params?.name === "hang";
      if (!hangs) res.write(`event: message\ndata: ${JSON.stringify(answer(result))}\n\n`);
      open.set(res, hangs ? "hang" : (message.method ?? ""));
      busy.add(req.socket);
      res.on("close", () => {
        open.delete(res);
        busy.delete(req.socket);
      });
    });
  });
  return {
    ...http,
    get openStreams() {
      return [...open.values()];
    },
    get onBusyConnection() {
      return onBusyConnection;
    },
  };
}

/** Six lists and six calls in turn, each answered; then every stream the upstream left open is closed, and no request went onto one. */
async function listAndCallSixTimes(gateway: Gateway, backend: StreamHoldingBackend): Promise<void> {
  for (let i = 0; i < 6; i++) {
    const listed = expectComplete(await call(gateway.url, "tools/list", {}, { token: "alice" }));
    assert.deepEqual(
      (listed.tools as Array<{ name: string }>).map((tool) => tool.name),
      ["echo", "hang"],
    );
    const echoed = expectComplete(await callTool(gateway.url, "echo", { text: `round ${i}` }, { token: "alice", capabilities: {} }));
    assert.equal(textOf(echoed), `echo: round ${i}`);
  }
  await until(
    5_000,
    "every stream the upstream left open closed by taskgate",
    () => {
      const open = backend.openStreams;
      if (open.length > 0) throw new Error(`still open: ${open.join(", ")}`);
      return true;
    },
    20,
  );
  assert.equal(backend.onBusyConnection, 0, "no request was written onto a connection whose stream was still open");
}

describe("a 2026-07-28 backend that leaves its SSE streams open after the response (a fake)", () => {
  let backend: StreamHoldingBackend;
  let gateway: Gateway;

  before(async () => {
    backend = await startStreamHoldingBackend();
    // Relayed lists and calls have connections of their own (not the two quick ones): a leak shows as streams left open.
    gateway = await startGatewayInFront(backend.url, {
      upstream: { protocol: "modern", connections: 2, requestTimeoutMs: 5_000 },
      tasks: { autoAfterMs: 100 },
      shutdown: { graceMs: 200 },
    });
  });
  after(async () => {
    await gateway?.close();
    await backend?.close();
  });

  it("answers every list and call, closes each stream it read its answer from, and never writes onto one still open", async () => {
    await listAndCallSixTimes(gateway, backend);
  });

  it("a call the backend never answers, held as a task, is ended when taskgate closes: the close does not wait for it", async () => {
    const task = expectTask(await callTool(gateway.url, "hang", {}, { token: "alice", capabilities: TASKS_CAPS }));
    assert.equal(task.status, "working");
    await until(
      5_000,
      "the hanging call's stream open at the backend",
      () => (backend.openStreams.includes("hang") ? true : undefined),
      20,
    );
    await within(15_000, "gateway.close() with a backend stream that never ends", gateway.close());
    assert.deepEqual(backend.openStreams, [], "taskgate closed the stream it was still reading");
  });
});

describe("ModernLink.close() with an exchange whose stream never ends (the same fake)", () => {
  it("ends the exchange as shutting_down instead of waiting for it, and closes the stream", async () => {
    const backend = await startStreamHoldingBackend();
    const link = new ModernLink({
      url: backend.url,
      connectTimeoutMs: 2_000,
      connections: 2,
      requestTimeoutMs: 5_000,
      credentialsOf: "taskgate",
    });
    try {
      // long, and no signal of its own: nothing but close() would ever end it.
      const exchange = link.exchange({
        id: link.nextId(),
        method: "tools/call",
        params: { name: "hang", arguments: {} },
        headers: {},
        long: true,
      });
      const first = exchange.next().then(
        () => "answered",
        (error: unknown) => error,
      );
      await until(5_000, "the exchange's stream open at the backend", () => (backend.openStreams.includes("hang") ? true : undefined), 20);
      await within(5_000, "ModernLink.close() with an exchange still reading", link.close());
      const ended = await first;
      assert.ok(ended instanceof UpstreamFailure && ended.reason === "shutting_down", `ended by: ${String(ended)}`);
      await until(5_000, "the backend's stream closed", () => (backend.openStreams.length === 0 ? true : undefined), 20);
      // And one started after close() is refused the same way.
      const late = await link.send({ id: link.nextId(), method: "tools/list", params: {}, headers: {} }).then(
        () => "answered",
        (error: unknown) => error,
      );
      assert.ok(late instanceof UpstreamFailure && late.reason === "shutting_down", `ended by: ${String(late)}`);
    } finally {
      await backend.close();
    }
  });
});

describe("a 2025-11-25 upstream that leaves its SSE streams open after the response (a fake)", () => {
  let backend: StreamHoldingBackend;
  let gateway: Gateway;

  before(async () => {
    backend = await startStreamHoldingBackend("legacy");
    // Two quick connections: a stream held after its answer keeps one until taskgate drops it.
    gateway = await startGatewayInFront(backend.url, { upstream: { protocol: "legacy", connections: 2, requestTimeoutMs: 5_000 } });
  });
  after(async () => {
    await gateway?.close();
    await backend?.close();
  });

  it("answers every list and call; each stream is closed after its answer and no request is written onto one still open", async () => {
    await listAndCallSixTimes(gateway, backend);
  });
});
