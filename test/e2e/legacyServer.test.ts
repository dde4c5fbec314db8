// E2E for examples/legacy-server: the SDK 1.x Client (and raw fetch where the wire matters) against
// startLegacyServer({port: 0, speed: 50}) over real HTTP. Observations come from the client and from
// the server's `events`; nothing is mocked.
// Run: node --import tsx --test test/e2e/legacyServer.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type CallToolResult,
  CancelledNotificationSchema,
  type ClientCapabilities,
  CreateMessageRequestSchema,
  ElicitationCompleteNotificationSchema,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
  ListRootsRequestSchema,
  McpError,
  type Progress,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import type { CancelledEvent, SessionEvent, ToolFinishedEvent, ToolStartedEvent } from "../../examples/legacy-server/state.js";
import { eventually, nextEvent } from "../support/waiting.js";

const SPEED = 50;

// ---------- helpers ----------

type ElicitHandler = (
  params: ElicitRequest["params"],
  extra: { signal: AbortSignal; requestId: string | number },
) => ElicitResult | Promise<ElicitResult>;

interface ClientSetup {
  capabilities?: ClientCapabilities;
  elicit?: ElicitHandler;
  sample?: (prompt: string) => string;
  roots?: string[];
}

interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport;
}

const openClients: Connected[] = [];

async function connect(server: LegacyServer, setup: ClientSetup = {}): Promise<Connected> {
  const client = new Client({ name: "legacy-server-test", version: "1.0.0" }, { capabilities: setup.capabilities ?? {} });
  if (setup.elicit) {
    const elicit = setup.elicit;
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => elicit(request.params, extra));
  }
  if (setup.sample) {
    const sample = setup.sample;
    client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      const content = request.params.messages[0]?.content;
      const prompt = content && !Array.isArray(content) && content.type === "text" ? content.text : "";
      return { role: "assistant", model: "test-model", content: { type: "text", text: sample(prompt) } };
    });
  }
  if (setup.roots) {
    const roots = setup.roots;
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: roots.map((uri) => ({ uri })) }));
  }
  const transport = new StreamableHTTPClientTransport(new URL(server.url));
  await client.connect(transport);
  const connected = { client, transport };
  openClients.push(connected);
  return connected;
}

async function closeClients(): Promise<void> {
  for (const { client } of openClients.splice(0)) await client.close().catch(() => undefined);
}

function textOf(result: unknown): string {
  const content = (result as CallToolResult).content;
  return content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}, onprogress?: (p: Progress) => void) {
  return client.callTool({ name, arguments: args }, undefined, { ...(onprogress ? { onprogress } : {}), timeout: 10_000 });
}

const FORM = { elicitation: {} } satisfies ClientCapabilities;
const FORM_AND_URL = { elicitation: { form: {}, url: {} } } satisfies ClientCapabilities;
/** The client's GET stream (which carries unrelated notifications) opens just after connect. */
const settle = () => delay(250);

// ---------- SDK client tests ----------

describe("legacy server via the SDK client", () => {
  let server: LegacyServer;
  before(async () => {
    server = await startLegacyServer({ port: 0, speed: SPEED });
  });
  after(async () => {
    await closeClients();
    await server.close();
  });

  test("initialize: server info, instructions, capabilities, session-opened event", async () => {
    const opened = nextEvent<SessionEvent>(server.events, "session-opened");
    const { client } = await connect(server, { capabilities: { ...FORM, sampling: {}, roots: {} } });
    const event = await opened;
    assert.match(event.sessionId, /^[0-9a-f-]{36}$/);
    assert.deepEqual(event.clientCapabilities, { elicitation: { form: {} }, sampling: {}, roots: {} });
    assert.ok(server.sessionCount() >= 1);
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    assert.deepEqual(client.getServerVersion(), { name: "example-legacy-server", version: "1.0.0" });
    assert.equal(client.getInstructions(), "An example legacy MCP server for taskgate demos.");
    const caps = client.getServerCapabilities();
    assert.deepEqual(caps?.tools, { listChanged: true });
    assert.deepEqual(caps?.prompts, { listChanged: true });
    assert.deepEqual(caps?.resources, { listChanged: true, subscribe: true });
    assert.ok(caps?.completions && caps.logging);
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(names, [
      "ask_sampling",
      "ask_then_work",
      "ask_url",
      "broken_tool",
      "build_report",
      "deploy",
      "fail_tool",
      "forecast",
      "greet",
      "list_roots",
      "log_steps",
      "ping_then_greet",
      "plan_release",
      "run_suite",
      "slow_echo",
      "toggle_beta",
      "touch_resource",
      "two_questions",
      "two_rounds",
    ]);
  });

  test("greet answers at once", async () => {
    const { client } = await connect(server);
    assert.equal(textOf(await call(client, "greet", { name: "Ada" })), "Hello, Ada!");
  });

  test("build_report: progress, then 'Include charts?' accepted ⇒ charts included", async () => {
    const asked: ElicitRequest["params"][] = [];
    const { client } = await connect(server, {
      capabilities: FORM,
      elicit: (params) => {
        asked.push(params);
        return { action: "accept", content: { charts: true } };
      },
    });
    const progress: Progress[] = [];
    const answered = nextEvent<{ tool: string; action: string; content: unknown }>(
      server.events,
      "elicitation-answered",
      (e) => e.tool === "build_report",
    );
    const result = await call(client, "build_report", { month: "2025-01" }, (p) => progress.push(p));
    assert.match(textOf(result), /^Report for 2025-01: .*charts included\.$/);
    assert.equal(asked.length, 1);
    assert.equal(asked[0]?.message, "Include charts?");
    assert.deepEqual((asked[0] as { requestedSchema: unknown }).requestedSchema, {
      type: "object",
      properties: { charts: { type: "boolean", title: "Include charts", description: "Add charts to the report" } },
      required: ["charts"],
    });
    assert.deepEqual(await answered, {
      tool: "build_report",
      action: "accept",
      content: { charts: true },
      sessionId: client.transport?.sessionId,
      requestId: 1, // the id of the elicitation/create the server sent (its first request on this session)
    });
    assert.deepEqual(
      progress.map((p) => p.progress),
      Array.from({ length: 18 }, (_, i) => i + 1),
    );
    assert.ok(progress.every((p) => p.total === 18));
    assert.equal(progress[2]?.message, "Collecting data (3/8)");
    assert.equal(progress[17]?.message, "Rendering report (10/10)");
  });

  test("build_report: declined ⇒ without charts, says the user declined", async () => {
    const { client } = await connect(server, { capabilities: FORM, elicit: () => ({ action: "decline" }) });
    const text = textOf(await call(client, "build_report", { month: "2025-02" }));
    assert.match(text, /^Report for 2025-02: .*without charts/);
    assert.match(text, /declined/);
  });

  test("build_report: client without elicitation ⇒ not asked, default without charts", async () => {
    const { client } = await connect(server);
    let answered = false;
    const listener = () => (answered = true);
    server.events.on("elicitation-answered", listener);
    const text = textOf(await call(client, "build_report", { month: "2025-03" }));
    server.events.off("elicitation-answered", listener);
    assert.match(text, /without charts/);
    assert.match(text, /cannot ask/);
    assert.equal(answered, false);
  });

  test("run_suite: asks 'Deploy anyway?'; accept ⇒ Deployed., decline or no capability ⇒ not deployed", async () => {
    const messages: string[] = [];
    const yes = await connect(server, {
      capabilities: FORM,
      elicit: (params) => {
        messages.push(params.message);
        return { action: "accept", content: { deploy: true } };
      },
    });
    const progress: Progress[] = [];
    assert.equal(textOf(await call(yes.client, "run_suite", {}, (p) => progress.push(p))), "Deployed.");
    assert.deepEqual(messages, ["3 flaky tests failed. Deploy anyway?"]);
    assert.equal(progress.length, 25);
    const no = await connect(server, { capabilities: FORM, elicit: () => ({ action: "decline" }) });
    assert.equal(textOf(await call(no.client, "run_suite")), "Not deployed: 3 flaky tests failed.");
    const none = await connect(server);
    assert.equal(textOf(await call(none.client, "run_suite")), "Not deployed: 3 flaky tests failed.");
  });

  test("fail_tool returns isError", async () => {
    const { client } = await connect(server);
    const result = await call(client, "fail_tool");
    assert.equal(result.isError, true);
    assert.equal(textOf(result), "The tool failed on purpose");
  });

  test("broken_tool fails with a real JSON-RPC error -32603", async () => {
    const { client } = await connect(server);
    const finished = nextEvent<ToolFinishedEvent>(server.events, "tool-finished", (e) => e.tool === "broken_tool");
    await assert.rejects(call(client, "broken_tool"), (error: unknown) => {
      assert.ok(error instanceof McpError);
      assert.equal(error.code, -32603);
      assert.equal(error.message, "MCP error -32603: broken_tool always fails"); // wire message has no prefix
      return true;
    });
    assert.equal((await finished).outcome, "error");
  });

  test("slow_echo echoes after the (scaled) wait", async () => {
    const { client } = await connect(server);
    const started = Date.now();
    assert.equal(textOf(await call(client, "slow_echo", { text: "hi", ms: 1000 })), "hi");
    assert.ok(Date.now() - started >= 1000 / SPEED - 5);
  });

  test("slow_echo with progressMs streams progress while it waits, then echoes", async () => {
    const { client } = await connect(server);
    const seen: Progress[] = [];
    assert.equal(textOf(await call(client, "slow_echo", { text: "busy", ms: 2500, progressMs: 1000 }, (p) => seen.push(p))), "busy");
    assert.deepEqual(
      seen.map((p) => [p.progress, p.total, p.message]),
      [
        [1, 3, "waited 1 of 3"],
        [2, 3, "waited 2 of 3"],
        [3, 3, "waited 3 of 3"],
      ],
    );
  });

  test("slow_echo: notifications/cancelled aborts the tool and is reported", async () => {
    const { client } = await connect(server);
    const started = nextEvent<ToolStartedEvent>(server.events, "tool-started", (e) => e.tool === "slow_echo");
    const cancelled = nextEvent<CancelledEvent>(server.events, "cancelled", (e) => e.tool === "slow_echo");
    const finished = nextEvent<ToolFinishedEvent>(server.events, "tool-finished", (e) => e.tool === "slow_echo");
    const abort = new AbortController();
    const pending = client.callTool({ name: "slow_echo", arguments: { text: "never", ms: 3_600_000 } }, undefined, {
      signal: abort.signal,
    });
    const start = await started;
    abort.abort("user cancelled");
    await assert.rejects(pending);
    const event = await cancelled;
    assert.equal(event.reason, "user cancelled");
    assert.equal(event.requestId, start.requestId);
    assert.equal((await finished).outcome, "cancelled");
  });

  test("build_report cancelled while asking: the tool stops and the question is withdrawn", async () => {
    let questionId: string | number | undefined;
    let withdraw!: (result: ElicitResult) => void;
    let markAsked!: () => void;
    const asked = new Promise<void>((resolve) => (markAsked = resolve));
    const { client } = await connect(server, {
      capabilities: FORM,
      elicit: (_params, extra) => {
        questionId = extra.requestId;
        markAsked();
        return new Promise<ElicitResult>((resolve) => (withdraw = resolve));
      },
    });
    // SDK 1.x Protocol ignores notifications/cancelled for requestId 0 (`if (!requestId) return`), and
    // this elicitation is the session's first server request (id 0), so observe the notification itself.
    const withdrawn = new Promise<{ requestId?: string | number | undefined; reason?: string | undefined }>((resolve) =>
      client.setNotificationHandler(CancelledNotificationSchema, (n) => resolve(n.params)),
    );
    const cancelled = nextEvent<CancelledEvent>(server.events, "cancelled", (e) => e.tool === "build_report");
    const abort = new AbortController();
    const pending = client.callTool({ name: "build_report", arguments: { month: "2025-04" } }, undefined, { signal: abort.signal });
    await asked;
    abort.abort("changed my mind");
    await assert.rejects(pending);
    assert.equal((await cancelled).reason, "changed my mind");
    const notice = await withdrawn;
    assert.equal(notice.requestId, questionId, "the server cancelled its elicitation request");
    withdraw({ action: "cancel" });
  });

  test("ask_url: URL elicitation, accept ⇒ elicitation/complete then Authorized.", async () => {
    let asked: ElicitRequest["params"] | undefined;
    const { client } = await connect(server, {
      capabilities: FORM_AND_URL,
      elicit: (params) => {
        asked = params;
        return { action: "accept" };
      },
    });
    const completed = new Promise<string>((resolve) =>
      client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => resolve(n.params.elicitationId)),
    );
    assert.equal(textOf(await call(client, "ask_url")), "Authorized.");
    assert.ok(asked && asked.mode === "url");
    assert.equal(asked.message, "Authorize access to the example service");
    assert.match(asked.url, /^https:\/\/example\.com\/authorize\?session=/);
    assert.equal(await completed, asked.elicitationId);
  });

  test("ask_url: declined or no URL capability ⇒ Not authorized.", async () => {
    const declined = await connect(server, { capabilities: FORM_AND_URL, elicit: () => ({ action: "decline" }) });
    assert.equal(textOf(await call(declined.client, "ask_url")), "Not authorized.");
    let asked = false;
    const formOnly = await connect(server, { capabilities: FORM, elicit: () => ((asked = true), { action: "accept" }) });
    assert.equal(textOf(await call(formOnly.client, "ask_url")), "Not authorized.");
    assert.equal(asked, false);
  });

  test("ask_sampling: model answer, or no model without the capability", async () => {
    const prompts: string[] = [];
    const withModel = await connect(server, { capabilities: { sampling: {} }, sample: (p) => (prompts.push(p), "forty-two") });
    const answered = nextEvent<{ text: string }>(server.events, "sampling-answered");
    assert.equal(textOf(await call(withModel.client, "ask_sampling", { prompt: "Meaning of life?" })), "Model said: forty-two");
    assert.deepEqual(prompts, ["Meaning of life?"]);
    assert.equal((await answered).text, "forty-two");
    const without = await connect(server);
    assert.equal(textOf(await call(without.client, "ask_sampling", { prompt: "x" })), "No model available.");
  });

  test("list_roots: roots listed, or none without the capability", async () => {
    const withRoots = await connect(server, { capabilities: { roots: {} }, roots: ["file:///a", "file:///b"] });
    assert.equal(textOf(await call(withRoots.client, "list_roots")), "Roots: file:///a, file:///b");
    const without = await connect(server);
    assert.equal(textOf(await call(without.client, "list_roots")), "No roots.");
  });

  test("two_questions: both questions are outstanding at the same time", async () => {
    const waiting: Array<{ params: ElicitRequest["params"]; resolve: (r: ElicitResult) => void }> = [];
    const answerFor = (params: ElicitRequest["params"]): ElicitResult =>
      params.message === "Pick a colour" ? { action: "accept", content: { colour: "teal" } } : { action: "accept", content: { size: "M" } };
    const { client } = await connect(server, {
      capabilities: FORM,
      elicit: (params) =>
        new Promise((resolve) => {
          waiting.push({ params, resolve });
          if (waiting.length === 2) for (const w of waiting) w.resolve(answerFor(w.params)); // only once both arrived
        }),
    });
    assert.equal(textOf(await call(client, "two_questions")), "colour=teal, size=M");
    assert.deepEqual(waiting.map((w) => w.params.message).sort(), ["Pick a colour", "Pick a size"]);
    const size = waiting.find((w) => w.params.message === "Pick a size")?.params as {
      requestedSchema: { properties: Record<string, unknown> };
    };
    assert.deepEqual(size.requestedSchema.properties.size, { type: "string", title: "Size", enum: ["S", "M", "L"] });
  });

  test("two_rounds: the second question comes after the first answer", async () => {
    const order: string[] = [];
    const { client } = await connect(server, {
      capabilities: FORM,
      elicit: (params) => {
        order.push(`asked ${params.message}`);
        const content: Record<string, string> = params.message === "First name?" ? { first: "Ada" } : { last: "Lovelace" };
        order.push(`answered ${params.message}`);
        return { action: "accept", content };
      },
    });
    assert.equal(textOf(await call(client, "two_rounds")), "Hello, Ada Lovelace!");
    assert.deepEqual(order, ["asked First name?", "answered First name?", "asked Last name?", "answered Last name?"]);
  });

  test("toggle_beta: every session gets tools/list_changed and sees beta come and go", async () => {
    const a = await connect(server);
    const b = await connect(server);
    let changesA = 0;
    let changesB = 0;
    a.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changesA++);
    b.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changesB++);
    await settle();
    assert.equal(textOf(await call(a.client, "toggle_beta")), "beta enabled");
    await eventually(() => changesA >= 1 && changesB >= 1, "the first list_changed reached A and B", 1_000);
    assert.ok((await b.client.listTools()).tools.some((t) => t.name === "beta"));
    assert.equal(textOf(await call(b.client, "beta")), "beta says hi");
    assert.equal(textOf(await call(b.client, "toggle_beta")), "beta disabled");
    await eventually(() => changesA >= 2 && changesB >= 2, "the second list_changed reached A and B", 1_000);
    assert.ok(!(await a.client.listTools()).tools.some((t) => t.name === "beta"));
  });

  test("touch_resource: subscribers get resources/updated and the counter changes", async () => {
    const { client } = await connect(server);
    const updated = new Promise<string>((resolve) =>
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)),
    );
    await client.subscribeResource({ uri: "example://counter" });
    await settle();
    const read = async () => {
      const content = (await client.readResource({ uri: "example://counter" })).contents[0];
      return Number(content && "text" in content ? content.text : NaN);
    };
    const before = await read();
    assert.match(textOf(await call(client, "touch_resource")), /^counter is now \d+$/);
    assert.equal(await updated, "example://counter");
    assert.equal(await read(), before + 1);
    await client.unsubscribeResource({ uri: "example://counter" });
  });

  test("resources, template, prompt and completions", async () => {
    const { client } = await connect(server);
    const uris = (await client.listResources()).resources.map((r) => r.uri);
    assert.ok(uris.includes("example://readme") && uris.includes("example://counter") && uris.includes("example://months/2025-01"));
    const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    assert.deepEqual(templates, ["example://months/{month}"]);
    const readme = (await client.readResource({ uri: "example://readme" })).contents[0];
    assert.ok(readme && "text" in readme && readme.text.length > 0);
    const month = (await client.readResource({ uri: "example://months/2025-03" })).contents[0];
    assert.ok(month && "text" in month && month.text.includes("2025-03"));
    const prompt = await client.getPrompt({ name: "summarize", arguments: { topic: "billing" } });
    assert.match(JSON.stringify(prompt.messages), /billing/);
    const topic = await client.complete({ ref: { type: "ref/prompt", name: "summarize" }, argument: { name: "topic", value: "de" } });
    assert.deepEqual(topic.completion.values, ["deploys"]);
    const months = await client.complete({
      ref: { type: "ref/resource", uri: "example://months/{month}" },
      argument: { name: "month", value: "2025-0" },
    });
    assert.ok(months.completion.values.includes("2025-01"));
  });
});

// ---------- raw HTTP tests: what the gateway sees on the wire ----------

interface Msg {
  jsonrpc: "2.0";
  id?: string | number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** JSON-RPC messages of an SSE body, in order (comments and empty data are skipped). */
async function* sseMessages(response: Response): AsyncGenerator<Msg> {
  assert.ok(response.body);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const data = buffer
        .slice(0, end)
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trimStart())
        .join("\n");
      buffer = buffer.slice(end + 2);
      if (data) yield JSON.parse(data) as Msg;
    }
  }
}

function post(url: string, body: unknown, sessionId?: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...(sessionId ? { "mcp-session-id": sessionId } : {}),
    },
    body: JSON.stringify(body),
  });
}

async function rawSession(server: LegacyServer, capabilities: ClientCapabilities = FORM): Promise<string> {
  const init = await post(server.url, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "raw", version: "1" } },
  });
  assert.equal(init.status, 200);
  assert.match(init.headers.get("content-type") ?? "", /^text\/event-stream/);
  const sessionId = init.headers.get("mcp-session-id");
  assert.ok(sessionId);
  for await (const msg of sseMessages(init)) assert.equal(msg.id, 1);
  assert.equal((await post(server.url, { jsonrpc: "2.0", method: "notifications/initialized" }, sessionId)).status, 202);
  return sessionId;
}

describe("legacy server on the wire", () => {
  let server: LegacyServer;
  before(async () => {
    server = await startLegacyServer({ port: 0, speed: SPEED });
  });
  after(async () => {
    await closeClients();
    await server.close();
  });

  test("elicitation and progress travel on the tool call's own SSE stream (no GET stream open)", async () => {
    const sessionId = await rawSession(server);
    const response = await post(
      server.url,
      {
        jsonrpc: "2.0",
        id: "call-1",
        method: "tools/call",
        params: { name: "build_report", arguments: { month: "2025-05" }, _meta: { progressToken: "p1" } },
      },
      sessionId,
    );
    assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
    const seen: string[] = [];
    let result: Msg | undefined;
    for await (const msg of sseMessages(response)) {
      if (msg.method === "notifications/progress") seen.push("progress");
      else if (msg.method === "elicitation/create") {
        seen.push("elicitation");
        assert.equal(msg.params?.message, "Include charts?");
        const answer = await post(
          server.url,
          { jsonrpc: "2.0", id: msg.id, result: { action: "accept", content: { charts: false } } },
          sessionId,
        );
        assert.equal(answer.status, 202);
      } else if (msg.id === "call-1") result = msg;
    }
    assert.deepEqual(seen, [...Array<string>(8).fill("progress"), "elicitation", ...Array<string>(10).fill("progress")]);
    assert.match(JSON.stringify(result?.result), /Report for 2025-05: .*without charts/);
  });

  test("unknown session ⇒ 404, missing session ⇒ 400", async () => {
    const unknown = await post(server.url, { jsonrpc: "2.0", id: 1, method: "tools/list" }, "no-such-session");
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as Msg).error?.code, -32001);
    const missing = await post(server.url, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    assert.equal(missing.status, 400);
  });

  test("GET opens the standalone SSE stream", async () => {
    const sessionId = await rawSession(server);
    const abort = new AbortController();
    const response = await fetch(server.url, {
      headers: { accept: "text/event-stream", "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
      signal: abort.signal,
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
    abort.abort();
  });

  test("DELETE ends the session; its next request gets 404", async () => {
    const sessionId = await rawSession(server);
    const closed = nextEvent<SessionEvent>(server.events, "session-closed", (e) => e.sessionId === sessionId);
    const response = await fetch(server.url, {
      method: "DELETE",
      headers: { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
    });
    assert.equal(response.status, 200);
    assert.deepEqual((await closed).clientCapabilities, { elicitation: { form: {} } });
    assert.equal((await post(server.url, { jsonrpc: "2.0", id: 2, method: "tools/list" }, sessionId)).status, 404);
  });

  test("expireAllSessions: every session is forgotten, running tools stop, next request 404", async () => {
    const { client } = await connect(server);
    const raw = await rawSession(server);
    assert.ok(server.sessionCount() >= 2);
    const started = nextEvent<ToolStartedEvent>(server.events, "tool-started", (e) => e.tool === "slow_echo");
    const finished = nextEvent<ToolFinishedEvent>(server.events, "tool-finished", (e) => e.tool === "slow_echo");
    const running = client.callTool({ name: "slow_echo", arguments: { text: "x", ms: 3_600_000 } });
    running.catch(() => undefined);
    await started;
    await server.expireAllSessions();
    assert.equal(server.sessionCount(), 0);
    assert.equal((await finished).outcome, "closed");
    assert.equal((await post(server.url, { jsonrpc: "2.0", id: 2, method: "tools/list" }, raw)).status, 404);
    await assert.rejects(client.listTools(), /404|Session not found/);
    const again = await connect(server); // a fresh initialize works
    assert.equal(textOf(await call(again.client, "greet", { name: "again" })), "Hello, again!");
  });
});
