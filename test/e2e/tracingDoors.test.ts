// OpenTelemetry traces through the doors tracing.test.ts does not cover: the legacy pass-through
// (an old client in front of a legacy HTTP server), the stdio bridge (an old client's session on a
// server process of its own), and a modern backend (our v2 SDK server as a child process) reached
// by a 2026-07-28 client through the relay and by an old client through the old-client door, and
// server-everything over stdio (it takes the trace context in `_meta` and still answers). The
// receiver is a real OTLP/HTTP one in this process; the upstreams answer with the traceparent they
// received, so the client's trace must be seen to continue through taskgate's server span and its
// client span to the upstream, in `_meta` and (over HTTP) in the headers. Failures carry their reason.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Gateway } from "../../src/gateway.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { mainArgs } from "../support/fixtureModules.js";
import { startTraceEchoHttp, type TraceEchoHttp } from "../support/fixtures/traceEchoServer.js";
import { LEGACY_VERSION, legacyInitialize, legacyRequest } from "../support/legacyClient.js";
import { errorOf, resultOf, rpc } from "../support/mcpClient.js";
import { deadUpstreamUrl } from "../support/ports.js";
import { CLIENT, type OtlpReceiver, SERVER } from "../support/servers/otlpReceiver.js";
import type { ServerProcess } from "../support/servers/serverProcess.js";
import { STDIO_COMMANDS, startThirdPartyServer } from "../support/servers/thirdParty.js";
import { readSse } from "../support/sse.js";
import { newTrace, seenBy, spanOf, startTraceReceiver, tracedGateway, traceparent } from "../support/traces.js";
import { until } from "../support/waiting.js";

const sha256Hex = (text: string) => createHash("sha256").update(text).digest("hex");

let receiver: OtlpReceiver;
before(async () => {
  receiver = await startTraceReceiver();
});
after(() => receiver.close());

/** The server span and the upstream client span named `name` in a trace. */
const spansOf = (traceId: string, name: string) =>
  receiver.waitFor(`server and client span ${name}`, (all) => {
    const server = spanOf(all, traceId, name, SERVER);
    const client = spanOf(all, traceId, name, CLIENT);
    return server && client ? { server, client } : undefined;
  });

/** An old client's session through the legacy door (with `headers`, e.g. its Authorization): its id. */
async function openSession(url: string, headers: Record<string, string> = {}): Promise<string> {
  const init = legacyInitialize();
  const body = { ...init, params: { ...(init.params as JsonObject), capabilities: { elicitation: {} } } };
  const opened = await legacyRequest(url, { body, headers });
  const id = opened.headers.get("mcp-session-id");
  assert.ok(id, `initialize opened no session: ${opened.status} ${JSON.stringify(opened.message)}`);
  await legacyRequest(url, { sessionId: id, headers, body: { jsonrpc: "2.0", method: "notifications/initialized" } });
  return id;
}

/** An old client's request on `session`, with the client's trace context in `_meta` (and headers, when given). */
function legacyCall(url: string, session: string, method: string, params: JsonObject, trace: string, headers: Record<string, string> = {}) {
  return legacyRequest(url, {
    sessionId: session,
    headers,
    body: { jsonrpc: "2.0", id: 7, method, params: { ...params, _meta: { traceparent: trace } } },
  });
}

const traceContextCall = { name: "trace_context", arguments: {} };

/**
 * An old client's trace_context call on a session of its own, with its trace in `_meta`: the door's
 * server span is the client's span's child, the upstream request the door span's child, and the
 * upstream saw the upstream request's span in `_meta`. What else a door shows is the test's.
 */
async function tracedOldClientCall(url: string, door: string, headers: Record<string, string> = {}) {
  const session = await openSession(url, headers);
  const trace = newTrace();
  const answer = await legacyCall(url, session, "tools/call", traceContextCall, traceparent(trace), headers);
  const saw = seenBy(answer.message.result as JsonObject);
  const { server, client } = await spansOf(trace.traceId, "tools/call trace_context");
  assert.equal(server.parentSpanId, trace.parent, "the door's span is the client's span's child");
  assert.equal(server.attributes["taskgate.door"], door);
  assert.equal(server.attributes["mcp.method.name"], "tools/call");
  assert.equal(server.attributes["taskgate.trace_context.source"], "_meta");
  assert.equal(client.parentSpanId, server.spanId, "the upstream request is the door span's child");
  assert.equal(saw.meta, `00-${trace.traceId}-${client.spanId}-01`, "the upstream got the door's client span, not the caller's");
  return { server, client, saw, session };
}

describe("tracing through the legacy pass-through (an old client, a legacy HTTP server)", () => {
  let upstream: TraceEchoHttp;
  let gw: Gateway;
  const logLines: JsonObject[] = [];
  before(async () => {
    upstream = await startTraceEchoHttp();
    gw = await tracedGateway({ url: upstream.url }, {}, logLines);
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  test("the old client's _meta trace continues through the door and reaches the upstream in _meta and headers", async () => {
    const { server, client, saw, session } = await tracedOldClientCall(gw.url, "pass_through", { traceparent: traceparent(newTrace()) });
    assert.equal(server.attributes["mcp.session.id"], session);
    assert.equal(server.attributes["taskgate.trace_context.headers_differ"], true);
    assert.equal(server.attributes["taskgate.outcome"], "ok");
    assert.equal(client.attributes["network.transport"], "tcp");
    assert.equal(saw.header, saw.meta, "the header the upstream got is the client span's, not the caller's");
    const lines = await until(5_000, "the request's log lines", () => {
      const request = logLines.find((line) => line.event === "request" && line.trace_id === server.traceId);
      const proxied = logLines.find((line) => line.event === "legacy.proxied" && line.trace_id === server.traceId);
      return request && proxied ? { request, proxied } : undefined;
    });
    assert.equal(lines.request.span_id, server.spanId, "the request line names the door's span");
    assert.equal(lines.proxied.span_id, server.spanId, "the proxy's own line is written inside it");
  });

  test("the upstream's JSON-RPC error marks both spans failed with its code", async () => {
    const session = await openSession(gw.url);
    const trace = newTrace();
    const answer = await legacyCall(gw.url, session, "prompts/get", { name: "nothing" }, traceparent(trace));
    const code = (answer.message.error as JsonObject | undefined)?.code;
    assert.equal(typeof code, "number", JSON.stringify(answer.message));
    const { server, client } = await spansOf(trace.traceId, "prompts/get nothing");
    for (const span of [server, client]) {
      assert.equal(span.statusCode, 2, `${span.kind} span failed`);
      assert.equal(span.attributes["rpc.response.status_code"], String(code));
    }
    assert.equal(server.attributes["taskgate.outcome"], "error");
  });
});

describe("tracing through the legacy pass-through when it authenticates (auth.mode tokens)", () => {
  let upstream: TraceEchoHttp;
  let gw: Gateway;
  before(async () => {
    upstream = await startTraceEchoHttp();
    const tokens = [{ sha256: sha256Hex("s3cret-alice"), subject: "alice" }];
    gw = await tracedGateway({ url: upstream.url }, { auth: { mode: "tokens", tokens } });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  test("the door's span names the caller by its subject hash, never by its subject", async () => {
    const { server } = await tracedOldClientCall(gw.url, "pass_through", { Authorization: "Bearer s3cret-alice" });
    assert.equal(server.attributes["taskgate.identity.subject_hash"], sha256Hex("subject:alice"));
    assert.ok(!JSON.stringify(server.attributes).includes("s3cret"), "no token in the span");
  });
});

describe("tracing through the legacy pass-through to an upstream that is not there", () => {
  let gw: Gateway;
  before(async () => {
    gw = await tracedGateway({ url: await deadUpstreamUrl() });
  });
  after(() => gw.close());

  test("the door's spans say upstream_unreachable", async () => {
    const trace = newTrace();
    const init = legacyInitialize();
    const answer = await legacyRequest(gw.url, {
      body: { ...init, params: { ...(init.params as JsonObject), _meta: { traceparent: traceparent(trace) } } },
    });
    assert.equal(answer.status, 502);
    const { server, client } = await spansOf(trace.traceId, "initialize");
    for (const span of [server, client]) {
      assert.equal(span.statusCode, 2);
      assert.equal(span.attributes["error.type"], "upstream_unreachable");
    }
    assert.equal(server.attributes["taskgate.error.reason"], "upstream_unreachable");
    assert.equal(server.attributes["http.response.status_code"], 502);
  });
});

describe("tracing through the stdio bridge (an old client, a stdio server)", () => {
  let gw: Gateway;
  before(async () => {
    gw = await tracedGateway({ command: [process.execPath, ...mainArgs("traceEchoServer")] });
  });
  after(() => gw.close());

  test("the old client's trace continues through the bridge to the server process in _meta", async () => {
    const { client, saw } = await tracedOldClientCall(gw.url, "stdio_bridge");
    assert.equal(client.attributes["network.transport"], "pipe");
    assert.equal(saw.header, null);
  });

  test("a server process that exits during the call fails both spans with upstream_exited", async () => {
    const session = await openSession(gw.url);
    const trace = newTrace();
    await legacyCall(gw.url, session, "tools/call", { name: "crash", arguments: {} }, traceparent(trace));
    const { server, client } = await spansOf(trace.traceId, "tools/call crash");
    assert.equal(client.statusCode, 2);
    assert.equal(client.attributes["error.type"], "upstream_exited");
    assert.equal(server.attributes["taskgate.error.reason"], "upstream_exited");
  });

  test("a request the old client cancels ends its client span as cancelled, not failed", async () => {
    const session = await openSession(gw.url);
    const trace = newTrace();
    const stop = new AbortController();
    try {
      await openCall(gw.url, session, "confirm", traceparent(trace), stop.signal);
      const cancel = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 9 } };
      assert.equal((await legacyRequest(gw.url, { sessionId: session, body: cancel })).status, 202);
      const client = await receiver.waitFor("the cancelled call's client span", (all) =>
        spanOf(all, trace.traceId, "tools/call confirm", CLIENT),
      );
      assert.equal(client.attributes["taskgate.outcome"], "cancelled");
      assert.notEqual(client.statusCode, 2, "a cancel is not a failure");
    } finally {
      stop.abort();
    }
  });
});

describe("tracing in front of server-everything over stdio", () => {
  let gw: Gateway;
  before(async () => {
    gw = await tracedGateway({ command: STDIO_COMMANDS.everything() });
  });
  after(() => gw.close());

  const echo = { name: "echo", arguments: { message: "traced" } };
  const textOf = (result: JsonObject) => (result.content as { text: string }[])[0]?.text ?? "";

  test("a 2026-07-28 call and an old client's call each continue the client's trace to the server process", async () => {
    const modern = newTrace();
    const reply = await rpc(gw.url, "tools/call", echo, { meta: { traceparent: traceparent(modern) } });
    assert.match(textOf(resultOf(reply)), /traced/, "the server takes the trace context in _meta");
    const direct = await spansOf(modern.traceId, "tools/call echo");
    assert.equal(direct.client.parentSpanId, direct.server.spanId);
    assert.equal(direct.client.attributes["network.transport"], "pipe");

    const session = await openSession(gw.url);
    const old = newTrace();
    const answer = await legacyCall(gw.url, session, "tools/call", echo, traceparent(old));
    assert.match(textOf(answer.message.result as JsonObject), /traced/);
    const bridged = await spansOf(old.traceId, "tools/call echo");
    assert.equal(bridged.server.parentSpanId, old.parent);
    assert.equal(bridged.server.attributes["taskgate.door"], "stdio_bridge");
    assert.equal(bridged.client.parentSpanId, bridged.server.spanId);
  });
});

/** An old client's tools/call `tool` on `session` left open: resolves once the server asked its question on the call's stream. */
async function openCall(url: string, session: string, tool: string, trace: string, stop: AbortSignal): Promise<void> {
  const response = await fetch(url, {
    method: "POST",
    signal: stop,
    headers: {
      Accept: "application/json, text/event-stream",
      "Content-Type": "application/json",
      "Mcp-Session-Id": session,
      "MCP-Protocol-Version": LEGACY_VERSION,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: { name: tool, arguments: {}, _meta: { traceparent: trace } },
    }),
  });
  await new Promise<void>((resolve, reject) => {
    readSse(response, { onFrame: (frame) => frame.method === "elicitation/create" && resolve() }).then(
      () => reject(new Error("the call's stream ended before the server asked")),
      () => undefined, // aborted by the test once done
    );
  });
}

describe("tracing in front of a modern backend (v2 SDK)", () => {
  let backend: ServerProcess;
  let gw: Gateway;
  before(async () => {
    backend = await startThirdPartyServer("modernOnly");
    gw = await tracedGateway({ url: backend.url, subjectHeader: "X-User" });
  });
  after(async () => {
    await gw?.close();
    await backend?.stop();
  });

  test("a relayed call's client span replaces the caller's trace context in _meta and in the headers", async () => {
    const trace = newTrace();
    const reply = await rpc(gw.url, "tools/call", traceContextCall, { meta: { traceparent: traceparent(trace) } });
    const saw = seenBy(resultOf(reply));
    const { server, client } = await spansOf(trace.traceId, "tools/call trace_context");
    assert.equal(server.parentSpanId, trace.parent);
    assert.equal(client.parentSpanId, server.spanId);
    assert.equal(client.attributes["server.address"], "127.0.0.1");
    assert.equal(saw.meta, `00-${trace.traceId}-${client.spanId}-01`, "the backend got taskgate's client span, not the caller's");
    assert.equal(saw.header, saw.meta);
  });

  test("an old client's call through the old-client door continues its trace to the backend", async () => {
    const { saw } = await tracedOldClientCall(gw.url, "old_client");
    assert.equal(saw.header, saw.meta);
  });

  test("a backend that is gone fails the call's spans with upstream_unreachable", async () => {
    await backend.stop();
    const trace = newTrace();
    const reply = await rpc(gw.url, "tools/call", traceContextCall, { meta: { traceparent: traceparent(trace) } });
    assert.equal((errorOf(reply).data as JsonObject).reason, "upstream_unreachable");
    const { server, client } = await spansOf(trace.traceId, "tools/call trace_context");
    assert.equal(client.attributes["error.type"], "upstream_unreachable");
    assert.equal(server.attributes["taskgate.error.reason"], "upstream_unreachable");
  });
});
