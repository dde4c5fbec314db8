// E2E for subscriptions/listen (issue 5): real example legacy server, real taskgate, real SSE
// clients. Between taskgate and the legacy server sits a recording HTTP proxy, so what taskgate
// sends upstream (resources/subscribe, resources/unsubscribe) is observed, not assumed.
// Run: node --import tsx --test test/e2e/subscriptions.test.ts

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import { ConfigSchema } from "../../src/config/schema.js";
import { type Gateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/observability/logger.js";
import { type JsonObject, TASKS_EXTENSION } from "../../src/protocol/wire.js";
import { type Listen, openListen, paramsOf, postOnFreshConnection, statusTrail, subscriptionIdOf } from "../support/listen.js";
import { errorOf, resultOf, rpc, TASKS_CAPS } from "../support/mcpClient.js";
import { scrape, waitForMetric } from "../support/metrics.js";
import { startStack } from "../support/stack.js";
import { eventually } from "../support/waiting.js";

// Slow enough that build_report is still working (~1 s) when the listen streams open, even on a loaded machine.
const SPEED = 8;
const COUNTER = "example://counter";
const TASKS_AND_FORMS = { extensions: { [TASKS_EXTENSION]: {} }, elicitation: {} };

// ---------- a recording pass-through proxy in front of the legacy server ----------

interface UpstreamCall {
  method: string;
  params?: JsonObject;
}

interface RecordingProxy {
  url: string;
  calls: UpstreamCall[];
  close(): Promise<void>;
}

async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const to = new URL(target);
  const calls: UpstreamCall[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (body.length > 0) {
        try {
          const parsed = JSON.parse(body.toString("utf8")) as UpstreamCall | UpstreamCall[];
          for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
            if (typeof message.method === "string")
              calls.push({ method: message.method, ...(message.params ? { params: message.params } : {}) });
          }
        } catch {
          // not JSON: forwarded as is
        }
      }
      const headers: IncomingHttpHeaders = { ...req.headers, host: to.host };
      const upstream = httpRequest({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers }, (upstreamRes) => {
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        res.flushHeaders(); // SSE streams (the standalone GET) must open before their first event
        upstreamRes.pipe(res);
      });
      upstream.on("error", () => res.destroy());
      res.on("close", () => upstream.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const callsOf = (proxy: RecordingProxy, method: string, uri: string) =>
  proxy.calls.filter((call) => call.method === method && call.params?.uri === uri).length;

// ---------- helpers ----------

async function startTask(url: string, token: string, month: string): Promise<string> {
  const reply = await rpc(url, "tools/call", { name: "build_report", arguments: { month } }, { token, capabilities: TASKS_AND_FORMS });
  const result = resultOf(reply);
  assert.equal(result?.resultType, "task", JSON.stringify(reply.message));
  return result.taskId as string;
}

function assertTagged(listen: Listen, id: string | number): void {
  for (const frame of listen.frames) {
    assert.deepEqual(subscriptionIdOf(frame), id, `frame not tagged with ${JSON.stringify(id)}: ${JSON.stringify(frame)}`);
  }
}

const isMethod = (method: string) => (frame: JsonObject) => frame.method === method;
const isTaskStatus = (taskId: string, status: string) => (frame: JsonObject) =>
  frame.method === "notifications/tasks" && paramsOf(frame).taskId === taskId && paramsOf(frame).status === status;

// ---------- tests ----------

describe("subscriptions/listen", () => {
  let legacy: LegacyServer;
  let proxy: RecordingProxy;
  let gateway: Gateway;
  let url: string;
  const open: Listen[] = [];
  const listen = async (...args: Parameters<typeof openListen>) => {
    const stream = await openListen(...args);
    open.push(stream);
    return stream;
  };

  before(async () => {
    legacy = await startLegacyServer({ port: 0, speed: SPEED });
    proxy = await startRecordingProxy(legacy.url);
    const config = ConfigSchema.parse({
      port: 0,
      auth: { mode: "demo" },
      upstream: { url: proxy.url },
      tasks: { tools: { build_report: "always" } },
      subscriptions: { keepAliveMs: 100 },
    });
    gateway = await startGateway(config, { log: createLogger(process.env.TEST_LOG_LEVEL ?? "silent") });
    url = gateway.url;
  });

  after(async () => {
    for (const stream of open) stream.close();
    await gateway.close();
    await proxy.close();
    await legacy.close();
  });

  test("server/discover advertises list changes and resource subscriptions, as the upstream does", async () => {
    const caps = resultOf(await rpc(url, "server/discover", {})).capabilities as JsonObject;
    assert.deepEqual(caps.tools, { listChanged: true });
    assert.deepEqual(caps.prompts, { listChanged: true });
    assert.deepEqual(caps.resources, { subscribe: true, listChanged: true });
  });

  let finishedTaskId = "";

  test("a task listener sees working → input_required → working → completed, pushed as they happen", async () => {
    // build_report works ~1 s (speed 8) before asking: the streams open well within that.
    const bobTask = await startTask(url, "bob", "2025-02");
    const aliceTask = await startTask(url, "alice", "2025-01");
    const randomId = randomBytes(20).toString("base64url");

    const mine = await listen(url, { taskIds: [aliceTask, bobTask, randomId] }, { id: "listen-tasks", capabilities: TASKS_CAPS });
    const second = await listen(url, { taskIds: [aliceTask] }, { id: "listen-tasks-2", capabilities: TASKS_CAPS });
    const snooper = await listen(url, { taskIds: [aliceTask, randomId] }, { id: "snoop", token: "bob", capabilities: TASKS_CAPS });
    assert.equal(mine.status, 200);
    assert.match(mine.contentType, /text\/event-stream/);

    // The acknowledgement first; only the caller's own task is honoured.
    const ack = await mine.waitFor(() => true);
    assert.equal(ack.method, "notifications/subscriptions/acknowledged");
    assert.deepEqual(paramsOf(ack).notifications, { taskIds: [aliceTask] });
    // Right after it, the task's current state (nothing between ack and the next change is lost).
    const current = await mine.waitFor((frame) => frame !== ack);
    assert.equal(current.method, "notifications/tasks");
    assert.equal(paramsOf(current).taskId, aliceTask);
    assert.equal(mine.frames[1], current);

    // The question arrives as a push, with the elicitation in inputRequests.
    const asking = await mine.waitFor(isTaskStatus(aliceTask, "input_required"), 10_000, "input_required");
    const inputRequests = paramsOf(asking).inputRequests as Record<string, { method: string; params: JsonObject }>;
    const [key, question] = Object.entries(inputRequests)[0] ?? [];
    assert.ok(key && question, JSON.stringify(asking));
    assert.equal(question.method, "elicitation/create");
    assert.equal(question.params.message, "Include charts?");

    // Answered from a different connection; the listener sees the rest without polling.
    const answered = await postOnFreshConnection(
      url,
      "tasks/update",
      { taskId: aliceTask, inputResponses: { [key]: { action: "accept", content: { charts: true } } } },
      { capabilities: TASKS_CAPS },
    );
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    const completed = await mine.waitFor(isTaskStatus(aliceTask, "completed"), 10_000, "completed");
    assert.deepEqual(statusTrail(mine.frames, aliceTask), ["working", "input_required", "working", "completed"]);
    // One frame per status change: build_report's progress updates are not pushed.
    const taskFrames = mine.frames.filter((f) => f.method === "notifications/tasks" && paramsOf(f).taskId === aliceTask);
    assert.deepEqual(
      taskFrames.map((f) => paramsOf(f).status),
      ["working", "input_required", "working", "completed"],
    );
    assert.match(JSON.stringify(paramsOf(completed).result), /charts included/);

    // Each frame is the DetailedTask exactly as tasks/get returns it (minus resultType).
    const { resultType, ...got } = resultOf(await rpc(url, "tasks/get", { taskId: aliceTask }, { capabilities: TASKS_CAPS }));
    assert.equal(resultType, "complete");
    const { _meta, ...pushed } = paramsOf(completed);
    assert.deepEqual(pushed, got);
    for (const frame of mine.frames.slice(1)) {
      assert.equal(frame.method, "notifications/tasks");
      assert.equal(paramsOf(frame).taskId, aliceTask, "another user's task leaked into the stream");
      assert.equal("resultType" in paramsOf(frame), false);
    }
    assertTagged(mine, "listen-tasks");

    // A second listen of the same client on the same task saw the same story.
    await second.waitFor(isTaskStatus(aliceTask, "completed"), 5_000, "completed on the second stream");
    assert.deepEqual(statusTrail(second.frames, aliceTask), ["working", "input_required", "working", "completed"]);
    assertTagged(second, "listen-tasks-2");

    // Terminal: nobody follows the task any more, though the streams stay open.
    await waitForMetric(url, "taskgate_listen_follows", { kind: "task" }, 0); // the finished task's bus listeners are released
    assert.equal(mine.isEnded(), false);

    // Someone else's task and a random id: not acknowledged, never a frame.
    assert.equal(snooper.frames.length, 1, JSON.stringify(snooper.frames));
    assert.deepEqual(paramsOf(snooper.frames[0]!).notifications, { taskIds: [] });
    assert.equal(
      mine.frames.some((frame) => paramsOf(frame).taskId === bobTask),
      false,
    );

    // Bob follows his own (still waiting) task; closing the stream releases the bus listener.
    const bobs = await listen(url, { taskIds: [bobTask] }, { id: "bob-own", token: "bob", capabilities: TASKS_CAPS });
    await bobs.waitFor(isMethod("notifications/tasks"));
    assert.equal((await scrape(url)).value("taskgate_listen_follows", { kind: "task" }), 1);
    bobs.close();
    await waitForMetric(url, "taskgate_listen_follows", { kind: "task" }, 0); // bus listener released on close

    for (const stream of [mine, second, snooper]) stream.close();
    await waitForMetric(url, "taskgate_listen_streams", {}, 0);
    await rpc(url, "tasks/cancel", { taskId: bobTask }, { token: "bob", capabilities: TASKS_CAPS });
    finishedTaskId = aliceTask;
  });

  test("a late subscriber to a finished task gets its completed state right after the ack", async () => {
    assert.ok(finishedTaskId, "needs the previous test");
    const late = await listen(url, { taskIds: [finishedTaskId] }, { id: 99, capabilities: TASKS_CAPS });
    const completed = await late.waitFor(isTaskStatus(finishedTaskId, "completed"), 5_000, "completed");
    assert.equal(late.frames[0]!.method, "notifications/subscriptions/acknowledged");
    assert.equal(late.frames[1], completed);
    assert.match(JSON.stringify(paramsOf(completed).result), /charts included/);
    assertTagged(late, 99);
    const following = await scrape(url);
    assert.equal(following.value("taskgate_listen_streams"), 1);
    assert.equal(following.value("taskgate_listen_follows", { kind: "task" }), 0, "a finished task is not followed");
    await delay(200); // an absence (no further frame) cannot be awaited: a window
    assert.equal(late.frames.length, 2);
    late.close();
    await waitForMetric(url, "taskgate_listen_streams", {}, 0);
  });

  test("taskIds without the tasks extension on this request: -32021, HTTP 400; bad filters: -32602", async () => {
    const refused = await listen(url, { taskIds: ["whatever"] }, { capabilities: {} });
    assert.equal(refused.status, 400);
    const error = refused.json?.error as { code: number; data?: JsonObject };
    assert.equal(error.code, -32021);
    assert.deepEqual(error.data, { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });

    for (const bad of [undefined, "tools", [], { resourceSubscriptions: "example://counter" }, { toolsListChanged: "yes" }]) {
      const reply = await listen(url, bad, { capabilities: TASKS_CAPS });
      assert.equal(reply.status, 200);
      assert.equal((reply.json?.error as { code: number }).code, -32602, JSON.stringify(bad));
    }
    const missing = await rpc(url, "subscriptions/listen", {});
    assert.equal(errorOf(missing).code, -32602);
    assert.equal((await scrape(url)).value("taskgate_listen_streams"), 0);
  });

  test("tools/list_changed from the upstream reaches a toolsListChanged listener, not a prompts-only one", async () => {
    const tools = await listen(url, { toolsListChanged: true }, { id: "tools" });
    const prompts = await listen(url, { promptsListChanged: true }, { id: "prompts" });
    assert.deepEqual(paramsOf(await tools.waitFor(() => true)).notifications, { toolsListChanged: true });
    assert.deepEqual(paramsOf(await prompts.waitFor(() => true)).notifications, { promptsListChanged: true });

    const toggled = await rpc(url, "tools/call", { name: "toggle_beta", arguments: {} });
    assert.match(JSON.stringify(toggled.message), /beta enabled/);
    const changed = await tools.waitFor(isMethod("notifications/tools/list_changed"), 5_000, "tools/list_changed");
    assert.deepEqual(changed.params, { _meta: { "io.modelcontextprotocol/subscriptionId": "tools" } });
    const listed = resultOf(await rpc(url, "tools/list", {}));
    assert.ok((listed.tools as JsonObject[]).some((tool) => tool.name === "beta"));

    await delay(300); // an absence (no frame on the prompts stream) cannot be awaited: a window
    assert.equal(prompts.frames.length, 1, JSON.stringify(prompts.frames));
    // The upstream told each of taskgate's sessions (one per capability profile); one frame it is.
    const told = (await scrape(url)).value("taskgate_upstream_notifications_total", { method: "notifications/tools/list_changed" });
    assert.ok(told >= 2, `expected several upstream sessions, the upstream told ${told}`);
    assert.equal(tools.frames.filter(isMethod("notifications/tools/list_changed")).length, 1, "one change, one frame");

    await rpc(url, "tools/call", { name: "toggle_beta", arguments: {} }); // back to the initial state
    await eventually(() => tools.frames.filter(isMethod("notifications/tools/list_changed")).length === 2, "second list_changed");
    assertTagged(tools, "tools");
    tools.close();
    prompts.close();
    const released = await waitForMetric(url, "taskgate_listen_streams", {}, 0);
    assert.equal(released.value("taskgate_listen_follows", { kind: "list" }), 0, "list listeners released");
  });

  test("resourceSubscriptions: resources/updated after touch_resource; closing unsubscribes upstream", async () => {
    const subscribesBefore = callsOf(proxy, "resources/subscribe", COUNTER);
    const first = await listen(url, { resourceSubscriptions: [COUNTER] }, { id: 7 });
    assert.deepEqual(paramsOf(await first.waitFor(() => true)).notifications, { resourceSubscriptions: [COUNTER] });
    assert.equal(callsOf(proxy, "resources/subscribe", COUNTER), subscribesBefore + 1, "subscribed upstream before the ack");

    // A second listener of the same uri shares the upstream subscription.
    const second = await listen(url, { resourceSubscriptions: [COUNTER], toolsListChanged: false }, { id: 8 });
    assert.deepEqual(paramsOf(await second.waitFor(() => true)).notifications, { resourceSubscriptions: [COUNTER] });
    assert.equal(callsOf(proxy, "resources/subscribe", COUNTER), subscribesBefore + 1);
    const both = await scrape(url);
    assert.equal(both.value("taskgate_listen_follows", { kind: "resource" }), 2);
    assert.equal(both.value("taskgate_upstream_resource_subscriptions"), 1, "one upstream subscription for both");

    await rpc(url, "tools/call", { name: "touch_resource", arguments: {} });
    const updated = await first.waitFor(isMethod("notifications/resources/updated"), 5_000, "resources/updated");
    assert.deepEqual(updated.params, { uri: COUNTER, _meta: { "io.modelcontextprotocol/subscriptionId": 7 } });
    await second.waitFor(isMethod("notifications/resources/updated"), 5_000, "resources/updated on the second stream");
    assertTagged(first, 7);
    assertTagged(second, 8);

    // The first leaves: the upstream subscription stays for the second.
    const unsubscribesBefore = callsOf(proxy, "resources/unsubscribe", COUNTER);
    first.close();
    const one = await waitForMetric(url, "taskgate_listen_streams", {}, 1);
    assert.equal(one.value("taskgate_listen_follows", { kind: "resource" }), 1);
    assert.equal(one.value("taskgate_upstream_resource_subscriptions"), 1);
    await delay(100); // an absence (no unsubscribe) cannot be awaited: a window
    assert.equal(callsOf(proxy, "resources/unsubscribe", COUNTER), unsubscribesBefore);

    // The last one leaves: the upstream is told, and it really stops notifying.
    second.close();
    await eventually(
      () => callsOf(proxy, "resources/unsubscribe", COUNTER) === unsubscribesBefore + 1,
      "resources/unsubscribe sent upstream",
    );
    const none = await waitForMetric(url, "taskgate_upstream_resource_subscriptions", {}, 0); // the gateway forgot the subscription
    assert.equal(none.value("taskgate_listen_streams"), 0);
    assert.equal(none.value("taskgate_listen_follows", { kind: "resource" }), 0);
    assert.equal(none.value("taskgate_listen_follows", { kind: "list" }), 0);
    const UPDATED = { method: "notifications/resources/updated" };
    const updatesBefore = none.value("taskgate_upstream_notifications_total", UPDATED);
    await rpc(url, "tools/call", { name: "touch_resource", arguments: {} });
    await delay(200); // an absence (no upstream notification) cannot be awaited: a window
    assert.equal((await scrape(url)).value("taskgate_upstream_notifications_total", UPDATED), updatesBefore, "upstream still notifies");
  });

  test("an upstream session that expired is subscribed again once taskgate re-opens it", async () => {
    const stream = await listen(url, { resourceSubscriptions: [COUNTER] }, { id: "reopen" });
    await stream.waitFor(() => true);
    const subscribes = callsOf(proxy, "resources/subscribe", COUNTER);

    await legacy.expireAllSessions();
    await rpc(url, "tools/list", {}); // 404 upstream ⇒ taskgate re-initialises its base session
    await eventually(() => callsOf(proxy, "resources/subscribe", COUNTER) === subscribes + 1, "subscription renewed on the new session");
    await rpc(url, "tools/call", { name: "touch_resource", arguments: {} });
    await stream.waitFor(isMethod("notifications/resources/updated"), 5_000, "resources/updated after the re-open");

    stream.close();
    const released = await waitForMetric(url, "taskgate_upstream_resource_subscriptions", {}, 0);
    assert.equal(released.value("taskgate_listen_streams"), 0);
  });

  test("keep-alive comments at the configured interval", async () => {
    const quiet = await listen(url, {}, { id: "quiet" });
    assert.deepEqual(paramsOf(await quiet.waitFor(() => true)).notifications, {});
    await delay(450); // time passing is what is tested: keep-alive comments at their interval
    assert.ok(quiet.comments.length >= 2, `comments: ${JSON.stringify(quiet.comments)}`);
    assert.equal(quiet.frames.length, 1);
    quiet.close();
    await waitForMetric(url, "taskgate_listen_streams", {}, 0);
  });
});

describe("subscriptions/listen at gateway shutdown", () => {
  test("each open stream gets the task's last state, then the closing result, then ends", async () => {
    const stack = await startStack({ speed: SPEED, config: { tasks: { tools: { build_report: "always" } } } });
    let closed = false;
    try {
      const taskId = await startTask(stack.url, "alice", "2025-03");
      const a = await openListen(stack.url, { taskIds: [taskId], toolsListChanged: true }, { id: 42, capabilities: TASKS_CAPS });
      const b = await openListen(stack.url, { resourcesListChanged: true }, { id: "b" });
      await a.waitFor(isMethod("notifications/tasks"));
      await b.waitFor(() => true);
      assert.equal((await scrape(stack.url)).value("taskgate_listen_streams"), 2);

      await stack.close();
      closed = true;
      await Promise.all([a.ended, b.ended]);
      assert.deepEqual(a.frames.at(-1), {
        jsonrpc: "2.0",
        id: 42,
        result: { resultType: "complete", _meta: { "io.modelcontextprotocol/subscriptionId": 42 } },
      });
      assert.deepEqual(b.frames.at(-1), {
        jsonrpc: "2.0",
        id: "b",
        result: { resultType: "complete", _meta: { "io.modelcontextprotocol/subscriptionId": "b" } },
      });
      assert.equal(paramsOf(a.frames.at(-2)!).status, "failed", "the task's shutdown failure is pushed before the end");
      assertTagged(a, 42);
      assertTagged(b, "b");
    } finally {
      if (!closed) await stack.close();
    }
  });
});
