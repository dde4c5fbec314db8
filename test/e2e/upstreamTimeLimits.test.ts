// Issue 10, case 2 (upstream half): every upstream wait is bounded. An upstream that accepts TCP
// and never answers (a blackhole server: a fault taskgate cannot cause with a real MCP server) gets
// upstream_timeout at initialize; a real upstream SIGSTOPped after taskgate opened its sessions gets
// upstream_timeout for short requests, and the calls and tasks in flight on it end with
// upstream_unresponsive once taskgate's pings go unanswered. Limits are small (support/limits.ts);
// a test only asserts that the answer came within ANSWER_WITHIN_MS, never a tighter duration.

import assert from "node:assert/strict";
import { after, afterEach, before, beforeEach, describe, test } from "node:test";
import type { ToolFinishedEvent } from "../../examples/legacy-server/state.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { rpcWithin } from "../support/boundedRpc.js";
import { closeAll } from "../support/closeAll.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { assertErrorEnding, assertErrorObject, assertErrorReply } from "../support/expectError.js";
import { forceGc } from "../support/forceGc.js";
import { type FaultGateway, startFaultGateway } from "../support/inProcessGateway.js";
import { ANSWER_WITHIN_MS, UPSTREAM_LIMITS } from "../support/limits.js";
import { TASKS_CAPS } from "../support/mcpClient.js";
import { type Blackhole, startBlackhole } from "../support/servers/blackhole.js";
import { LegacyProcess } from "../support/servers/legacyProcess.js";
import { startSlowTask } from "../support/slowTask.js";
import { pollTask } from "../support/tasks.js";
import { timed, until } from "../support/waiting.js";

failIfStillRunning();

const INITIALIZE_TIMEOUT = /^Upstream timed out: no answer to initialize within 1500 ms \((upstream\.)?initializeTimeoutMs\)/;
const requestTimeout = (method: string) =>
  new RegExp(`^Upstream timed out: no answer to ${method.replace("/", "\\/")} within 1500 ms \\((upstream\\.)?requestTimeoutMs\\)`);
const UNRESPONSIVE = /^Upstream stopped answering/;
const TASK_POLICY = { tasks: { tools: { slow_echo: "always" as const } } };

describe("an upstream that accepts connections and never answers (blackhole server)", () => {
  let blackhole: Blackhole;
  let gw: FaultGateway;
  before(async () => {
    blackhole = await startBlackhole("silent");
    // A legacy upstream declared as such: its first contact is initialize (with `auto` it is the era probe, below).
    gw = await startFaultGateway(blackhole.url, { upstream: { ...UPSTREAM_LIMITS, protocol: "legacy" }, ...TASK_POLICY });
  });
  after(() =>
    closeAll(
      () => blackhole?.close(),
      () => gw?.close(),
    ),
  );

  test("with upstream.protocol auto, server/discover answers 504 upstream_timeout naming the era probe and upstream.requestTimeoutMs", async () => {
    const auto = await startFaultGateway(blackhole.url, { upstream: { ...UPSTREAM_LIMITS }, ...TASK_POLICY });
    try {
      const reply = await rpcWithin(ANSWER_WITHIN_MS, auto.url, "server/discover", {});
      assertErrorReply(reply, { http: 504, reason: "upstream_timeout", message: requestTimeout("server/discover") }, "server/discover");
    } finally {
      await auto.close();
    }
  });

  test("server/discover, tools/call greet and a task-policy tools/call each answer 504 upstream_timeout naming initialize and upstream.initializeTimeoutMs", async (t) => {
    const calls: Array<[string, JsonObject, JsonObject]> = [
      ["server/discover", {}, {}],
      ["tools/call", { name: "greet", arguments: { name: "x" } }, {}],
      ["tools/call", { name: "slow_echo", arguments: { text: "x", ms: 10 } }, TASKS_CAPS],
    ];
    for (const [method, params, capabilities] of calls) {
      const { value: reply, ms } = await timed(() => rpcWithin(ANSWER_WITHIN_MS, gw.url, method, params, { capabilities }));
      assertErrorReply(
        reply,
        { http: 504, reason: "upstream_timeout", message: INITIALIZE_TIMEOUT },
        `${method} ${JSON.stringify(params)}`,
      );
      t.diagnostic(`${method} ${String(params.name ?? "")}: HTTP ${reply.status} after ${ms} ms`);
    }
    assert.ok(blackhole.accepted() > 0, "taskgate did connect to the upstream");
  });
});

describe("an upstream SIGSTOPped after taskgate opened its sessions", () => {
  let legacy: LegacyProcess;
  let gw: FaultGateway;
  beforeEach(async () => {
    legacy = await LegacyProcess.start();
    // Two quick attempts to end a session upstream (upstream.cancelAttempts also bounds its DELETEs).
    gw = await startFaultGateway(legacy.url, { upstream: { ...UPSTREAM_LIMITS, cancelAttempts: 2, cancelRetryMs: 100 }, ...TASK_POLICY });
    // Sessions exist (the no-capabilities profile and the tasks one), and the tool catalog is known.
    for (const capabilities of [{}, TASKS_CAPS]) {
      const warm = await rpcWithin(
        ANSWER_WITHIN_MS,
        gw.url,
        "tools/call",
        { name: "greet", arguments: { name: "warm" } },
        { capabilities },
      );
      assert.ok(warm.message.result, `warm-up greet: ${JSON.stringify(warm.message)}`);
    }
  });
  afterEach(async () => {
    if (legacy?.process.isRunning()) legacy.resume();
    await closeAll(
      () => gw?.close(),
      () => legacy?.close(),
    );
  });

  test("tools/list answers 504 upstream_timeout naming tools/list and upstream.requestTimeoutMs", async (t) => {
    legacy.pause();
    const { value: list, ms } = await timed(() => rpcWithin(ANSWER_WITHIN_MS, gw.url, "tools/list", {}));
    t.diagnostic(`tools/list: HTTP ${list.status} after ${ms} ms`);
    assertErrorReply(list, { http: 504, reason: "upstream_timeout", message: requestTimeout("tools/list") }, "tools/list");
  });

  test("an inline tools/call in flight on the stopped upstream ends with upstream_unresponsive once pings go unanswered", async (t) => {
    legacy.pause();
    const { value: reply, ms } = await timed(() =>
      rpcWithin(ANSWER_WITHIN_MS, gw.url, "tools/call", { name: "greet", arguments: { name: "stuck" } }),
    );
    t.diagnostic(`inline greet: HTTP ${reply.status} ${reply.contentType} after ${ms} ms`);
    assertErrorEnding(reply, { http: 504, reason: "upstream_unresponsive", message: UNRESPONSIVE }, "inline greet");
  });

  test("a running task fails with upstream_unresponsive once pings go unanswered, and is cancelled upstream when it wakes", async (t) => {
    const { taskId, requestId } = await startSlowTask(legacy, gw.url);

    legacy.pause();
    const { value: task, ms } = await timed(() =>
      pollTask(gw.url, taskId, (task) => task.status !== "working", { timeoutMs: ANSWER_WITHIN_MS }),
    );
    t.diagnostic(`task ${String(task.status)} ${ms} ms after SIGSTOP`);
    assert.equal(task.status, "failed", JSON.stringify(task));
    assertErrorObject(task.error, { reason: "upstream_unresponsive", message: UNRESPONSIVE }, "the failed task's error");
    assert.match(String(task.statusMessage), UNRESPONSIVE);

    // The session's DELETE cannot get through either: sent again, then reported. A collection
    // meanwhile (a busy gateway has them) must not take the DELETE's time limit away.
    forceGc();
    const deleteFailed = await until(
      ANSWER_WITHIN_MS,
      "upstream.session.delete.failed",
      () => gw.logs.mentioning("upstream.session.delete.failed")[0],
    ).catch((error: Error) => {
      // Says what the session did instead (the upstream's events as taskgate logged them).
      const seen = gw.logs.lines.filter((line) => String(line.event ?? "").startsWith("upstream."));
      throw new Error(`${error.message}; upstream events logged: ${JSON.stringify(seen.map((l) => ({ event: l.event, calls: l.calls })))}`);
    });
    assert.equal(deleteFailed.attempts, 2);
    assert.equal(deleteFailed.calls, 1, "it names the calls the upstream may still run");

    // Once the upstream runs again it hears that the call was given up (cancelled, or its session closed).
    const ended = legacy.next<ToolFinishedEvent>("tool-finished", (e) => e.tool === "slow_echo" && e.requestId === requestId);
    legacy.resume();
    const { outcome } = await ended;
    assert.ok(["cancelled", "closed"].includes(outcome), `slow_echo ended upstream with outcome ${outcome}`);
  });
});
