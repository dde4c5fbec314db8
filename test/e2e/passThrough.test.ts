// E2E: a real legacy client (SDK 1.x Client + StreamableHTTPClientTransport) pointed at the
// GATEWAY is passed through to the example legacy server unchanged: initialize, lists, a tool
// call whose elicitation travels back to the client, DELETE; afterwards the ended session id is
// proxied so the upstream's 404 reaches the client. Run: node --import tsx --test test/e2e/passThrough.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, type ElicitRequest, ElicitRequestSchema, type Progress } from "@modelcontextprotocol/sdk/types.js";
import type { ElicitationAnsweredEvent, SessionEvent } from "../../examples/legacy-server/state.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { legacyInitialize, legacyRequest } from "../support/legacyClient.js";
import { type Stack, startStack } from "../support/stack.js";
import { nextEvent } from "../support/waiting.js";

const LEGACY_VERSION = "2025-11-25";

let stack: Stack;
before(async () => {
  stack = await startStack({ speed: 50 });
});
after(async () => {
  await stack.close();
});

function textOf(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

/** A legacy-shaped POST (no modern _meta) on a given session, with the legacy version header. */
function legacyPost(sessionId: string, body: JsonObject) {
  return fetch(stack.url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": LEGACY_VERSION,
      "Mcp-Session-Id": sessionId,
    },
    body: JSON.stringify(body),
  });
}

describe("legacy pass-through with the SDK 1.x client", () => {
  let client: Client;
  let transport: StreamableHTTPClientTransport;
  let sessionId: string;
  const questions: ElicitRequest["params"][] = [];

  test("initialize through the gateway opens a session on the upstream, with its server info and capabilities", async () => {
    // This client's session: taskgate's own sessions (its readiness check) declare every question kind.
    const opened = nextEvent<SessionEvent>(stack.legacy.events, "session-opened", (e) =>
      isDeepStrictEqual(e.clientCapabilities, { elicitation: { form: {} } }),
    );
    client = new Client({ name: "pass-through-e2e", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      questions.push(request.params);
      return { action: "accept", content: { charts: true } };
    });
    transport = new StreamableHTTPClientTransport(new URL(stack.url));
    await client.connect(transport);

    const event = await opened;
    assert.ok(transport.sessionId, "the upstream's session id reached the client");
    sessionId = transport.sessionId;
    assert.equal(event.sessionId, sessionId, "the client holds the upstream's own session id");
    assert.deepEqual(event.clientCapabilities, { elicitation: { form: {} } }, "the client's capabilities reached the upstream unchanged");
    assert.deepEqual(client.getServerVersion(), { name: "example-legacy-server", version: "1.0.0" });
    assert.ok(client.getServerCapabilities()?.tools);
    assert.ok(client.getServerCapabilities()?.logging, "the upstream's legacy capabilities are not filtered on the legacy path");
  });

  test("listTools returns the upstream's tools as they are (legacy shape, execution included)", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ["greet", "build_report", "slow_echo"]) assert.ok(names.includes(name));
    assert.ok(
      tools.some((t) => t.execution !== undefined),
      "legacy fields pass through untouched",
    );
  });

  test("callTool build_report: the elicitation reaches the client and the accepted answer shapes the result", async () => {
    const answered = nextEvent<ElicitationAnsweredEvent>(stack.legacy.events, "elicitation-answered", (e) => e.tool === "build_report");
    const progress: Progress[] = [];
    const result = await client.callTool({ name: "build_report", arguments: { month: "2025-01" } }, undefined, {
      timeout: 15_000,
      onprogress: (p) => progress.push(p),
    });
    assert.equal(questions.length, 1);
    assert.equal(questions[0]?.message, "Include charts?");
    const event = await answered;
    assert.equal(event.action, "accept");
    assert.deepEqual(event.content, { charts: true });
    assert.match(textOf(result), /Report for 2025-01: .*charts included\./);
    assert.ok(progress.length >= 3, "progress notifications pass through too");
  });

  test("terminateSession (DELETE) through the gateway ends the upstream session", async () => {
    const closed = nextEvent<SessionEvent>(stack.legacy.events, "session-closed", (e) => e.sessionId === sessionId);
    await transport.terminateSession();
    await closed;
    assert.equal(transport.sessionId, undefined);
    await client.close();
  });

  test("a POST with the ended session id is proxied and gets the upstream's 404", async () => {
    const response = await legacyPost(sessionId, { jsonrpc: "2.0", id: 9, method: "tools/list", params: {} });
    assert.equal(response.status, 404);
    const body = (await response.json()) as { error: { code: number; message: string } };
    assert.equal(body.error.code, -32001, "the upstream's own error, not a gateway one");
    assert.match(body.error.message, /Session not found/);
  });

  test("a GET with the ended session id is proxied and gets the upstream's 404 (GET is never modern)", async () => {
    const response = await fetch(stack.url, {
      method: "GET",
      headers: { Accept: "text/event-stream", "MCP-Protocol-Version": LEGACY_VERSION, "Mcp-Session-Id": sessionId },
    });
    await response.body?.cancel();
    assert.equal(response.status, 404);
  });
});

describe("legacy door connections to the upstream", () => {
  test("sequential legacy calls reuse a few kept-alive upstream connections (counted by the upstream), not one each", async () => {
    const opened = await legacyRequest(stack.url, { body: legacyInitialize(1) });
    const sessionId = opened.headers.get("mcp-session-id");
    assert.ok(sessionId, "the upstream issued a session id through the door");
    await legacyRequest(stack.url, { sessionId, body: { jsonrpc: "2.0", method: "notifications/initialized" } });
    const before = stack.legacy.acceptedConnections();
    const CALLS = 40;
    for (let i = 0; i < CALLS; i++) {
      const answer = await legacyRequest(stack.url, {
        sessionId,
        body: { jsonrpc: "2.0", id: 10 + i, method: "tools/call", params: { name: "greet", arguments: { name: `n${i}` } } },
      });
      assert.equal(textOf(answer.message.result), `Hello, n${i}!`);
    }
    const opened40 = stack.legacy.acceptedConnections() - before;
    assert.ok(opened40 <= 3, `${CALLS} sequential legacy calls opened ${opened40} upstream connections (at most 3 expected)`);
    await legacyRequest(stack.url, { sessionId, method: "DELETE" });
  });
});
