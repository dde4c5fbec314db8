// Issue 13: old clients through the legacy door of a taskgate whose upstream is a stdio server.
// Each old-client session (the SDK 1.x Client over Streamable HTTP) gets a server-everything
// process of its own: tools, a long call with progress on the call's stream, an elicitation
// answered by the client's handler, DELETE stopping the process, and a process that dies making
// its session 404 (so the client initializes again).
// Run: node --import tsx --test test/e2e/realServers/stdioLegacyDoor.test.ts

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, ElicitRequestSchema, type Progress } from "@modelcontextprotocol/sdk/types.js";
import type { Gateway } from "../../../src/gateway.js";
import { ready, startGatewayOnCommand } from "../../support/gatewayInFront.js";
import { connectLegacyClient, legacyInitialize, legacyRequest, legacyToolsList } from "../../support/legacyClient.js";
import { isRunning } from "../../support/processes.js";
import { STDIO_COMMANDS } from "../../support/servers/thirdParty.js";
import { eventually } from "../../support/waiting.js";

function textOf(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

describe("legacy door in front of a stdio server: one process per old-client session", () => {
  let gateway: Gateway;
  const clients: Client[] = [];

  before(async () => {
    gateway = await startGatewayOnCommand(STDIO_COMMANDS.everything(), { upstream: { stopGraceMs: 500 } });
    await ready(gateway); // the readiness process runs: later pids are the clients'
  });
  after(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await gateway?.close();
  });

  /** An SDK 1.x client connected through the gateway, with the pid of the process it got. */
  async function connect(
    capabilities: Record<string, unknown> = {},
  ): Promise<{ client: Client; transport: StreamableHTTPClientTransport; pid: number }> {
    const before = gateway.upstreamProcesses?.() ?? [];
    const client = new Client({ name: "old-client", version: "1.0.0" }, { capabilities });
    const transport = new StreamableHTTPClientTransport(new URL(gateway.url));
    await client.connect(transport);
    clients.push(client);
    const started = (gateway.upstreamProcesses?.() ?? []).filter((pid) => !before.includes(pid));
    assert.equal(started.length, 1, `the session started one process (${started.join(", ")})`);
    return { client, transport, pid: started[0] as number };
  }

  test("initialize, tools/list and a call reach the stdio server", async () => {
    const { client } = await connect();
    assert.match(client.getServerVersion()?.name ?? "", /everything/i);
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === "echo"));
    assert.match(textOf(await client.callTool({ name: "echo", arguments: { message: "old client" } })), /old client/);
  });

  test("a long call's progress reaches the client, then its result", async () => {
    const { client } = await connect();
    const progress: Progress[] = [];
    const result = await client.callTool({ name: "trigger-long-running-operation", arguments: { duration: 1, steps: 3 } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    assert.match(textOf(result), /Long running operation completed/);
    assert.deepEqual(
      progress.map((p) => p.progress),
      [1, 2, 3],
    );
  });

  test("the server's elicitation reaches the client's handler, and its answer the server", async () => {
    const { client } = await connect({ elicitation: {} });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: "decline" };
    });
    const result = await client.callTool({ name: "trigger-elicitation-request", arguments: {} });
    assert.equal(asked.length, 1);
    assert.match(textOf(result), /declined/i);
  });

  test("two old clients get two processes; DELETE stops the session's process", async () => {
    const first = await connect();
    const second = await connect();
    assert.notEqual(first.pid, second.pid);
    await first.transport.terminateSession();
    await eventually(() => !isRunning(first.pid), `process ${first.pid} stops after DELETE`, 5_000);
    assert.ok(isRunning(second.pid), "the other session's process keeps running");
  });

  test("a session whose process died answers 404, so the client initializes again", async () => {
    const { transport, pid } = await connect();
    process.kill(pid, "SIGKILL");
    await eventually(() => !(gateway.upstreamProcesses?.() ?? []).includes(pid), `process ${pid} gone`, 5_000);
    const response = await fetch(gateway.url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "Mcp-Session-Id": transport.sessionId as string,
        "MCP-Protocol-Version": "2025-11-25",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list", params: {} }),
    });
    assert.equal(response.status, 404, await response.text());
  });

  test("a legacy POST whose body is not JSON is a parse error, on a session or not", async () => {
    const { transport } = await connect();
    for (const session of [transport.sessionId as string, undefined]) {
      const response = await fetch(gateway.url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "MCP-Protocol-Version": "2025-11-25",
          ...(session ? { "Mcp-Session-Id": session } : {}),
        },
        body: "{not json",
      });
      assert.equal(response.status, 400);
      assert.equal(((await response.json()) as { error: { code: number } }).error.code, -32700);
    }
  });

  test("without a session, only initialize starts a process: anything else is a 400 and starts none", async () => {
    const before = gateway.upstreamProcesses?.() ?? [];
    const response = await fetch(gateway.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    assert.equal(response.status, 400, await response.text());
    assert.deepEqual(gateway.upstreamProcesses?.(), before);
  });
});

describe("legacy door at upstream.maxProcesses", () => {
  let gateway: Gateway;
  const clients: Client[] = [];

  before(async () => {
    gateway = await startGatewayOnCommand(STDIO_COMMANDS.everything(), { upstream: { maxProcesses: 1, stopGraceMs: 500 } });
    await ready(gateway);
  });
  after(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await gateway?.close();
  });

  test("an idle upstream session makes room for an old client; with the one process busy, the next initialize is a 503 naming the option", async () => {
    const client = new Client({ name: "old-client", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)));
    clients.push(client);
    assert.match(textOf(await client.callTool({ name: "echo", arguments: { message: "took the place" } })), /took the place/);
    const response = await fetch(gateway.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "second", version: "1" } },
      }),
    });
    assert.equal(response.status, 503);
    assert.match(
      await response.text(),
      /upstream\.maxProcesses \(1\) server processes, all in use; retry later or raise upstream\.maxProcesses/,
    );
  });
});

describe("legacy door: an old-client session idle for upstream.sessionIdleMs", () => {
  let gateway: Gateway;

  before(async () => {
    // 1.5 s: an old client's initialize and notifications/initialized must fit in it on a loaded machine.
    gateway = await startGatewayOnCommand(STDIO_COMMANDS.everything(), { upstream: { sessionIdleMs: 1_500, stopGraceMs: 500 } });
    await ready(gateway);
  });
  after(async () => {
    await gateway?.close();
  });

  test("is not idle while a call waits for its response, however quiet", async () => {
    const client = new Client({ name: "old-client", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)));
    // Three quiet seconds (no progress token, so no progress) on a 1.5 s idle limit.
    const result = await client.callTool({ name: "trigger-long-running-operation", arguments: { duration: 3, steps: 1 } });
    assert.match(textOf(result), /Long running operation completed/);
    await client.close();
  });

  test("is closed with its process; its id then answers 404", async () => {
    const before = gateway.upstreamProcesses?.() ?? [];
    const client = new Client({ name: "old-client", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(gateway.url));
    await client.connect(transport);
    const [pid] = (gateway.upstreamProcesses?.() ?? []).filter((p) => !before.includes(p));
    assert.ok(pid);
    await eventually(() => !isRunning(pid), `idle session's process ${pid} stopped`, 10_000);
    await assert.rejects(client.listTools(), /404|Session not found/);
    await client.close().catch(() => undefined);
  });
});

describe("legacy door in front of a stdio server, auth.mode tokens: a session belongs to the identity that opened it", () => {
  let gateway: Gateway;
  const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

  before(async () => {
    gateway = await startGatewayOnCommand(STDIO_COMMANDS.everything(), {
      auth: {
        mode: "tokens",
        tokens: [
          { sha256: sha256("s3cret-alice"), subject: "alice" },
          { sha256: sha256("s3cret-bob"), subject: "bob" },
        ],
      },
      upstream: { stopGraceMs: 500 },
    });
    await ready(gateway); // the readiness process runs: later pids are the clients'
  });
  after(async () => {
    await gateway?.close();
  });

  test("no token: 401 and no process; another identity on alice's session: 404 like an unknown one; alice goes on", async () => {
    const before = gateway.upstreamProcesses?.() ?? [];
    assert.equal((await legacyRequest(gateway.url, { body: legacyInitialize() })).status, 401);
    assert.deepEqual(gateway.upstreamProcesses?.() ?? [], before, "no process started for a caller without a token");

    const { client, transport } = await connectLegacyClient(gateway.url, "s3cret-alice");
    const sessionId = transport.sessionId as string;
    const asBob = await legacyRequest(gateway.url, { body: legacyToolsList(), token: "s3cret-bob", sessionId });
    assert.equal(asBob.status, 404);
    assert.match(String((asBob.message.error as { message: string }).message), /Session not found/);
    assert.equal(
      (await legacyRequest(gateway.url, { method: "DELETE", token: "s3cret-bob", sessionId })).status,
      404,
      "bob cannot end alice's session",
    );

    const { tools } = await client.listTools();
    assert.ok(
      tools.some((tool) => tool.name === "echo"),
      "alice's session and its process were not touched",
    );
    await transport.terminateSession();
    await client.close();
  });
});
