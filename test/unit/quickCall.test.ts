// The short road of an inline call (calls/quickCall.ts), through a real CallDesk whose calls go to a
// real UpstreamPool over scripted transports: a plain call is answered without a RunningCall; the
// first question, or the end of the JSON window, hands it to the full road with the request already
// running upstream (one tools/call sent, never two); a client that leaves or a shutdown cancels it
// upstream; a forgotten session is sent once more; quotas count it while it runs.
// Run: node --import tsx --test test/unit/quickCall.test.ts

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CallDesk, type CallRequest } from "../../src/calls/callDesk.js";
import type { QuotaLimits } from "../../src/calls/callQuotas.js";
import { type CallStart, directCalls, type ModernCalls, upstreamCalls } from "../../src/calls/callStarter.js";
import { ParkedCalls } from "../../src/calls/parkedCalls.js";
import { RequestStateCodec } from "../../src/calls/requestStateCodec.js";
import type { TaskSettings } from "../../src/calls/taskPolicy.js";
import { createCluster } from "../../src/cluster/createCluster.js";
import { ErrorCode } from "../../src/protocol/errors.js";
import type { Reply } from "../../src/protocol/reply.js";
import type { JsonObject, RequestId } from "../../src/protocol/wire.js";
import { createTaskStore } from "../../src/tasks/stores/createTaskStore.js";
import type { TaskRecord } from "../../src/tasks/taskRecord.js";
import { TaskRecords } from "../../src/tasks/taskRecords.js";
import { TaskRunner } from "../../src/tasks/taskRunner.js";
import type { JsonRpcMessage } from "../../src/upstream/transport.js";
import { UpstreamFailure } from "../../src/upstream/upstreamFailure.js";
import { UpstreamPool } from "../../src/upstream/upstreamPool.js";
import { log, requestOf, SECRET, settingsOf, TASKS_CAPS, toolOrder } from "../support/desk.js";
import { exchangeOf, type Script, ScriptedTransport, server } from "../support/scriptedTransport.js";
import { eventually } from "../support/waiting.js";

const FORM = { elicitation: {} };

/** The upstream: holds every tools/call until the test answers it; `held` lists them with their transport. */
function upstream() {
  const held: Array<{ message: JsonRpcMessage; transport: ScriptedTransport }> = [];
  const script: Script = (message, transport) => {
    if (message.method === "tools/call") held.push({ message, transport });
  };
  return { held, script };
}

async function deskOn(
  script: Script,
  options: { quotas?: QuotaLimits; settings?: Partial<TaskSettings>; modern?: ModernCalls; sessionIds?: () => string } = {},
) {
  const transports: ScriptedTransport[] = [];
  const pool = new UpstreamPool({
    connect: () => {
      const transport = new ScriptedTransport(server(script), options.sessionIds?.() ?? `session-${transports.length + 1}`);
      transports.push(transport);
      return transport;
    },
    log,
    clientInfo: { name: "taskgate", version: "test" },
    maxSessions: 10,
    sessionIdleMs: 60_000,
    requestTimeoutMs: 2_000,
    timeouts: { initializeTimeoutMs: 2_000, pingIntervalMs: 60_000, pingTimeoutMs: 1_000 },
  });
  const instanceId = "here";
  const store = await createTaskStore({ kind: "memory" });
  const cluster = await createCluster<TaskRecord>({ kind: "local", instanceId });
  const settings = settingsOf(options.settings);
  const runner = new TaskRunner({
    records: new TaskRecords(store, cluster.bus),
    instanceId,
    settings: { ...settings, pollIntervalMs: 1_000 },
    log,
  });
  const fullRoad: CallStart[] = [];
  const startCall = upstreamCalls(pool, 60_000, options.modern);
  const desk = new CallDesk({
    startCall: (start) => {
      fullRoad.push(start);
      return startCall(start);
    },
    direct: directCalls(pool, options.modern),
    runner,
    parked: new ParkedCalls(new RequestStateCodec(SECRET), 60_000, log, instanceId),
    link: cluster.link,
    holderAlive: (id) => cluster.leases.isAlive(id),
    quotas: options.quotas ?? {},
    settings,
    log,
  });
  // The owner's session is open before the calls (the short road takes only a session open now).
  await pool.hold("owner-hash", {}).then((release) => release());
  return { desk, pool, transports, fullRoad, runner };
}

const resultOf = (reply: Reply): JsonObject => {
  assert.equal(reply.kind, "result", `expected a result, got ${JSON.stringify(reply)}`);
  return (reply as { result: JsonObject }).result;
};
const callsSent = (transports: ScriptedTransport[]) => transports.flatMap((t) => t.sentOf("tools/call"));
const cancelsSent = (transports: ScriptedTransport[]) => transports.flatMap((t) => t.sentOf("notifications/cancelled"));

describe("the short road of an inline call", () => {
  test("a plain call is answered as JSON with no RunningCall made; its session is given back", async () => {
    const { held, script } = upstream();
    const { desk, pool, fullRoad } = await deskOn(script);
    const request = requestOf({ name: "greet" });
    const pending = desk.open(request, toolOrder("greet", "never"));
    await eventually(() => held.length === 1, "the call reached the upstream");
    assert.equal(pool.callCount(), 1, "running on the lent session");
    assert.equal(desk.held().inline, 1, "counted as a live inline call (shutdown drains it)");
    const { message, transport } = held[0]!;
    transport.reply(message, {
      content: [{ type: "text", text: "hi" }],
      _meta: { "io.modelcontextprotocol/related-task": { taskId: "x" } },
    });
    assert.deepEqual(resultOf(await pending), { content: [{ type: "text", text: "hi" }], resultType: "complete" });
    assert.equal(fullRoad.length, 0, "no RunningCall was made");
    assert.deepEqual([pool.callCount(), desk.held().inline, request.note.outcome], [0, 0, "result"]);
  });

  test("the upstream's own error is the reply, named as on the full road", async () => {
    const { held, script } = upstream();
    const { desk } = await deskOn(script);
    const request = requestOf({ name: "bad" });
    const pending = desk.open(request, toolOrder("bad", "never"));
    await eventually(() => held.length === 1, "the call reached the upstream");
    held[0]!.transport.fail(held[0]!.message, -32602, "MCP error -32602: no such tool");
    const reply = await pending;
    assert.equal(reply.kind, "error");
    if (reply.kind === "error") assert.deepEqual([reply.error.code, reply.error.message], [-32602, "no such tool"]);
    assert.equal(request.note.outcome, "error");
  });

  test("a question hands the call to the full road: an MRTR round, then the retry's answer reaches the same request", async () => {
    const { held, script } = upstream();
    const { desk, fullRoad, transports } = await deskOn(script);
    const pending = desk.open(requestOf({ name: "ask" }, FORM), toolOrder("ask", "never"));
    await eventually(() => held.length === 1, "the call reached the upstream");
    const { message, transport } = held[0]!;
    const answered = transport.ask(
      "elicitation/create",
      { mode: "form", message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } },
      exchangeOf(message.id as RequestId),
    );
    const round = resultOf(await pending);
    assert.equal(round.resultType, "input_required");
    assert.equal(fullRoad.length, 1, "promoted: a RunningCall adopted the request");
    assert.ok(fullRoad[0]?.adopt, "adopted, not started again");

    const [key] = Object.keys(round.inputRequests as JsonObject);
    const retry = requestOf(
      { name: "ask", requestState: round.requestState, inputResponses: { [key!]: { action: "accept", content: { name: "Ada" } } } },
      FORM,
    );
    const resumed = desk.open(retry, toolOrder("ask", "never"));
    assert.deepEqual((await answered).result, { action: "accept", content: { name: "Ada" } });
    transport.reply(message, { content: [{ type: "text", text: "Hello, Ada" }] });
    assert.equal(resultOf(await resumed).resultType, "complete");
    assert.equal(callsSent(transports).length, 1, "one tools/call upstream, never two");
  });

  test("promoted after the backend turned modern meanwhile: the legacy request is adopted, nothing is sent again", async () => {
    const { held, script } = upstream();
    let modernNow = false;
    const modern: ModernCalls = {
      // A stand-in link, only ever reached if a promoted call were started again on the modern road.
      linkNow: () => (modernNow ? ({} as ReturnType<ModernCalls["linkNow"]>) : undefined),
      headersFor: () => ({}),
      upgraded: async () => false,
    };
    const { desk, transports } = await deskOn(script, { modern });
    const pending = desk.open(requestOf({ name: "slow" }), toolOrder("slow", "never"));
    await eventually(() => held.length === 1, "the call reached the upstream");
    modernNow = true;
    const reply = await pending; // the window ends: promoted
    assert.equal(reply.kind, "stream");
    held[0]!.transport.reply(held[0]!.message, { content: [] });
    if (reply.kind !== "stream") return;
    const messages: JsonObject[] = [];
    for await (const message of reply.messages) messages.push(message);
    assert.equal((messages.at(-1)?.result as JsonObject | undefined)?.resultType, "complete");
    assert.equal(callsSent(transports).length, 1);
  });

  test("no answer within the JSON window: the reply becomes a stream whose last message is the result", async () => {
    const { held, script } = upstream();
    const { desk, fullRoad } = await deskOn(script);
    const pending = desk.open(requestOf({ name: "slow" }), toolOrder("slow", "never"));
    await eventually(() => held.length === 1, "the call reached the upstream");
    const reply = await pending; // the window (250 ms) ends first
    assert.equal(reply.kind, "stream");
    assert.equal(fullRoad.length, 1);
    held[0]!.transport.reply(held[0]!.message, { content: [] });
    if (reply.kind !== "stream") return;
    const messages: JsonObject[] = [];
    for await (const message of reply.messages) messages.push(message);
    assert.deepEqual(
      messages.map((m) => (m.result as JsonObject | undefined)?.resultType),
      ["complete"],
    );
  });

  test("policy auto: a call still running after autoAfterMs becomes a task, the request still the one upstream", async () => {
    const { held, script } = upstream();
    const { desk, runner, transports } = await deskOn(script, { settings: { autoAfterMs: 50 } });
    const handle = resultOf(await desk.open(requestOf({ name: "long" }, TASKS_CAPS), toolOrder("long", "auto")));
    assert.equal(handle.resultType, "task");
    assert.equal(runner.count(), 1);
    assert.equal(callsSent(transports).length, 1);
    held[0]!.transport.reply(held[0]!.message, { content: [] });
    await eventually(() => runner.count() === 0, "the task ended with the upstream's result");
  });

  test("a client that leaves cancels the call upstream (notifications/cancelled for its request)", async () => {
    const { held, script } = upstream();
    const { desk, pool, transports } = await deskOn(script);
    const request = requestOf({ name: "greet" });
    const pending = desk.open(request, toolOrder("greet", "never"));
    await eventually(() => held.length === 1, "the call reached the upstream");
    request.leave();
    await pending;
    await eventually(() => cancelsSent(transports).length === 1, "the cancel reached the upstream");
    assert.equal(cancelsSent(transports)[0]?.params?.requestId, held[0]!.message.id);
    assert.deepEqual([request.note.outcome, pool.callCount(), desk.held().inline], ["client_disconnected", 0, 0]);
  });

  test("shutdown ends it with shutting_down and cancels it upstream", async () => {
    const { held, script } = upstream();
    const { desk, transports } = await deskOn(script);
    const pending = desk.open(requestOf({ name: "greet" }), toolOrder("greet", "never"));
    await eventually(() => held.length === 1, "the call reached the upstream");
    await desk.shutdown(0);
    const reply = await pending;
    assert.equal(reply.kind, "error");
    if (reply.kind === "error") assert.equal((reply.error.data as JsonObject).reason, "shutting_down");
    await eventually(() => cancelsSent(transports).length === 1, "the cancel reached the upstream");
  });

  test("a session the upstream forgot: the call is sent once more on a new session, and answered", async () => {
    const { held, script } = upstream();
    const { desk, transports } = await deskOn(script);
    transports[0]!.refuseWith = new UpstreamFailure("session_gone", "the upstream no longer knows session session-1 (HTTP 404)");
    const pending = desk.open(requestOf({ name: "greet" }), toolOrder("greet", "never"));
    await eventually(() => held.length === 1, "sent again on a new session");
    assert.equal(transports.length, 2);
    held[0]!.transport.reply(held[0]!.message, { content: [] });
    assert.equal(resultOf(await pending).resultType, "complete");
  });

  test("quotas.maxHeldCalls counts a call on the short road while it runs", async () => {
    const { held, script } = upstream();
    const { desk } = await deskOn(script, { quotas: { maxHeldCalls: 1 } });
    const first = desk.open(requestOf({ name: "a" }), toolOrder("a", "never"));
    await eventually(() => held.length === 1, "the first call is running");
    await assert.rejects(desk.open(requestOf({ name: "b" }), toolOrder("b", "never")), (error: { data?: JsonObject }) => {
      assert.equal(error.data?.reason, "quota_exceeded");
      return true;
    });
    held[0]!.transport.reply(held[0]!.message, { content: [] });
    await first;
    const third = desk.open(requestOf({ name: "c" }), toolOrder("c", "never"));
    await eventually(() => held.length === 2, "admitted once the first ended");
    held[1]!.transport.reply(held[1]!.message, { content: [] });
    assert.equal(resultOf(await third).resultType, "complete");
  });

  test("a failure that means the backend moved to 2026-07-28 is named upstream_era_changed, as on the full road", async () => {
    const { held, script } = upstream();
    let probed = 0;
    const modern: ModernCalls = {
      linkNow: () => undefined,
      headersFor: () => ({}),
      upgraded: async () => {
        probed++;
        return true;
      },
    };
    const { desk } = await deskOn(script, { modern });
    const request: CallRequest & { leave(): void } = requestOf({ name: "greet" });
    const pending = desk.open(request, toolOrder("greet", "never"));
    await eventually(() => held.length === 1, "the call reached the upstream");
    held[0]!.transport.end(new UpstreamFailure("upstream_not_mcp", "the upstream answered HTTP 400 to tools/call"));
    const reply = await pending;
    assert.equal(reply.kind, "error");
    if (reply.kind === "error") {
      assert.equal(reply.error.code, ErrorCode.InternalError);
      assert.equal((reply.error.data as JsonObject).reason, "upstream_era_changed");
    }
    assert.equal(probed, 1);
  });
});
