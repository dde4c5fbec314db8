// An old client in front of a modern server: the real SDK 1.x Client + StreamableHTTPClientTransport
// through taskgate's legacy door, with the v2 SDK fixture behind it in LEGACY=reject (2026-only:
// it refuses initialize itself). taskgate serves the session protocol: initialize answered from the
// backend's discover, a session of its own, requests translated to 2026-07-28 with the client's
// capabilities, progress passed on, a backend task followed to its result, the backend's MRTR question asked of the client's elicitation
// handler and its answer sent back as the retry, a cancel that closes the backend's request (or
// cancels its task), the session bound to its identity and ended by DELETE.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, ElicitRequestSchema, type Progress } from "@modelcontextprotocol/sdk/types.js";
import type { Gateway } from "../../../src/gateway.js";
import { startGatewayInFront } from "../../support/gatewayInFront.js";
import type { ServerProcess } from "../../support/servers/serverProcess.js";
import { startThirdPartyServer } from "../../support/servers/thirdParty.js";

const LIST = { jsonrpc: "2.0", id: 9, method: "tools/list", params: {} };
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

const textOf = (result: unknown): string => (result as CallToolResult).content.map((c) => (c.type === "text" ? c.text : "")).join("");

describe("an SDK 1.x client through the legacy door of a 2026-only backend", () => {
  let server: ServerProcess;
  let gateway: Gateway;
  let client: Client;
  let transport: StreamableHTTPClientTransport;
  const questions: string[] = [];
  /** While set, the task's title question is held: the test knows taskgate is following the task. */
  let holdTitle: { asked(): Promise<{ action: "cancel" }> } | undefined;

  /** A legacy-shaped POST (tools/list unless told) on a session, as `token`. */
  const post = (url: string, sessionId: string | undefined, token: string, message: object = LIST) =>
    fetch(url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
        ...(sessionId ? { "Mcp-Session-Id": sessionId } : {}),
        Authorization: `Bearer ${token}`,
      },
      body: JSON.stringify(message),
    });

  before(async () => {
    server = await startThirdPartyServer("modernOnly");
    gateway = await startGatewayInFront(server.url, { upstream: { subjectHeader: "X-User" } });
    client = new Client({ name: "old-client-e2e", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      questions.push(request.params.message);
      if (holdTitle && request.params.message.startsWith("Title")) return holdTitle.asked();
      return { action: "accept", content: request.params.message.startsWith("Title") ? { title: "Q3" } : { name: "Grace" } };
    });
    transport = new StreamableHTTPClientTransport(new URL(gateway.url), { requestInit: { headers: { Authorization: "Bearer alice" } } });
  });
  after(async () => {
    await client?.close();
    await gateway?.close();
    await server?.stop();
  });

  it("initializes from the backend's discover, with a session taskgate keeps", async () => {
    await client.connect(transport);
    assert.equal(client.getServerVersion()?.name, "taskgate-modern-fixture");
    assert.ok(client.getServerCapabilities()?.tools, "the backend's tools capability");
    assert.equal(client.getServerCapabilities()?.extensions, undefined, "2026's extensions block is not shown to an old client");
    assert.equal(client.getInstructions(), "A modern fixture.");
    assert.match(transport.sessionId ?? "", /^[0-9a-f-]{36}$/);
  });

  it("lists the backend's tools and calls one as the caller", async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ["ask_name", "greet", "native_report", "slow", "trace_context"]);
    const greeted = await client.callTool({ name: "greet", arguments: { name: "Ada" } });
    assert.match(textOf(greeted), /^Hello, Ada! \(as /);
    assert.equal((greeted as Record<string, unknown>).resultType, undefined, "the old shape: no resultType");
  });

  it("asks the backend's question of the client's elicitation handler and sends its answer back", async () => {
    const asked = await client.callTool({ name: "ask_name", arguments: {} });
    assert.equal(textOf(asked), "Hello, Grace!");
    assert.deepEqual(questions, ["What is your name?"]);
  });

  it("passes the backend's progress on to the client", async () => {
    const progress: Progress[] = [];
    const slept = await client.callTool({ name: "slow", arguments: { ms: 300 } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    assert.equal(textOf(slept), "slept 300 ms");
    assert.deepEqual(
      progress.map((p) => p.progress),
      [100, 200, 300],
    );
  });

  it("cancels the backend's request when the client cancels", async () => {
    const controller = new AbortController();
    const started = server.waitForLine(/"fixture":"tool-start","tool":"slow"/, { timeoutMs: 5_000 });
    const cancelled = server.waitForLine(/"fixture":"tool-cancel"/, { timeoutMs: 5_000 });
    const call = client.callTool({ name: "slow", arguments: { ms: 10_000 } }, undefined, { signal: controller.signal });
    await started;
    controller.abort("enough");
    await assert.rejects(call);
    await cancelled;
  });

  it("follows a task of the backend's own to its result, given as the call's result", async () => {
    const created = server.waitForLine(/"fixture":"task-created"/, { timeoutMs: 5_000 });
    const report = await client.callTool({ name: "native_report", arguments: {} });
    await created;
    assert.match(textOf(report), /^report 'untitled' for /);
  });

  it("asks a task's question of the client and sends the answer with tasks/update", async () => {
    const report = await client.callTool({ name: "native_report", arguments: { ask: true } });
    assert.match(textOf(report), /^report 'Q3' for /);
    assert.equal(questions.at(-1), "Title of the report?");
  });

  it("cancels a followed task on the backend when the client cancels", async () => {
    const controller = new AbortController();
    const cancelled = server.waitForLine(/"fixture":"task-cancelled"/, { timeoutMs: 5_000 });
    let release: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => {
      holdTitle = {
        asked: () => {
          resolve();
          return new Promise((answer) => (release = () => answer({ action: "cancel" })));
        },
      };
    });
    const call = client.callTool({ name: "native_report", arguments: { ask: true } }, undefined, { signal: controller.signal });
    await asked; // taskgate follows the task and asks its question
    controller.abort("enough");
    await assert.rejects(call);
    await cancelled;
    holdTitle = undefined;
    release();
  });

  it("keeps a session to the identity that opened it when the door authenticates: another one gets 404", async () => {
    const tokens = [
      { sha256: sha256("s3cret-alice"), subject: "alice" },
      { sha256: sha256("s3cret-bob"), subject: "bob" },
    ];
    const guarded = await startGatewayInFront(server.url, { auth: { mode: "tokens", tokens }, upstream: { subjectHeader: "X-User" } });
    try {
      const init = {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
      };
      const opened = await post(guarded.url, undefined, "s3cret-alice", init);
      assert.equal(opened.status, 200);
      const sessionId = opened.headers.get("mcp-session-id") as string;
      assert.equal((await post(guarded.url, sessionId, "s3cret-bob")).status, 404);
      assert.equal((await post(guarded.url, sessionId, "s3cret-alice")).status, 200);
    } finally {
      await guarded.close();
    }
  });

  it("ends the session on DELETE: the next request on it is refused with 404", async () => {
    const sessionId = transport.sessionId as string;
    await transport.terminateSession();
    assert.equal((await post(gateway.url, sessionId, "alice")).status, 404);
  });
});
