// Held calls through stalls, against real processes: 200 tasks whose calls stream progress
// (slow_echo with progressMs on the example legacy server, a child process) through a taskgate
// child process, pinged every 200 ms with a 2 s limit, 50 calls per upstream session. Opening a
// session may take 5 s: a loaded machine must not fail the setup, which is not what is tested.
// - the upstream is SIGSTOPped for a moment (so each session has a ping out), then taskgate itself
//   for two ping limits while the upstream, running again, answers and streams into taskgate's
//   sockets. When taskgate runs again its ping timers fire before it has read what waits there:
//   those pings are late but the streams were alive, so no session may end and no task may fail.
// - the upstream is SIGSTOPped and every task cancelled: no notifications/cancelled can be taken.
//   Each one gets a counted outcome; once the upstream runs again, every call has ended there,
//   seen cancelled or ended with a session taskgate reported ending (an undelivered cancel, a missed ping).
// Run: node --import tsx --test test/e2e/heldOnSlowUpstream.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { ToolFinishedEvent } from "../../examples/legacy-server/state.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { rpcWithin } from "../support/boundedRpc.js";
import { closeAll } from "../support/closeAll.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { type GatewayProcess, GatewayProcesses } from "../support/gatewayProcess.js";
import { ANSWER_WITHIN_MS, UPSTREAM_LIMITS } from "../support/limits.js";
import { LEVEL } from "../support/logCapture.js";
import { resultOf, TASKS_CAPS } from "../support/mcpClient.js";
import { scrape, waitForMetric } from "../support/metrics.js";
import { LegacyProcess } from "../support/servers/legacyProcess.js";
import { until, within } from "../support/waiting.js";

failIfStillRunning();

const HELD = 200;
const PER_SESSION = 50;
const PING_TIMEOUT_MS = 2_000;
const PINGS = "taskgate_upstream_pings_total";
const CANCELS = "taskgate_upstream_cancels_total";

describe(`${HELD} held calls streaming progress through a stalled taskgate, then cancelled on a stopped upstream`, () => {
  let legacy: LegacyProcess;
  const gateways = new GatewayProcesses();
  let gw: GatewayProcess;
  const taskIds: string[] = [];
  const finished: ToolFinishedEvent[] = [];
  before(async () => {
    legacy = await LegacyProcess.start();
    legacy.events.on("tool-finished", (event: ToolFinishedEvent) => finished.push(event));
    gw = await gateways.start({
      upstream: {
        url: legacy.url,
        ...UPSTREAM_LIMITS,
        connectTimeoutMs: 5_000,
        initializeTimeoutMs: 5_000,
        pingIntervalMs: 200,
        pingTimeoutMs: PING_TIMEOUT_MS,
        cancelAttempts: 2,
        cancelRetryMs: 100,
        maxCallsPerSession: PER_SESSION,
      },
      tasks: { tools: { slow_echo: "always" } },
    });
    let started = 0;
    const allStarted = new Promise<void>((resolve) =>
      legacy.events.on("tool-started", () => {
        if (++started === HELD) resolve();
      }),
    );
    for (let batch = 0; batch < HELD / 20; batch++) {
      const replies = await Promise.all(
        Array.from({ length: 20 }, () =>
          rpcWithin(
            ANSWER_WITHIN_MS,
            gw.url,
            "tools/call",
            { name: "slow_echo", arguments: { text: "held", ms: 120_000, progressMs: 200 } },
            { capabilities: TASKS_CAPS },
          ),
        ),
      );
      for (const reply of replies) taskIds.push(resultOf(reply).taskId as string);
    }
    // Setup, not a measure: on a loaded machine 200 upstream starts behind a child taskgate take longer than one answer may.
    await explained(within(3 * ANSWER_WITHIN_MS, `all ${HELD} calls started upstream`, allStarted), () => `${started} started`);
  });
  // A failed wait says what the tasks and taskgate were doing: their states and its warnings, counted.
  const explained = <T>(wait: Promise<T>, also = () => ""): Promise<T> =>
    wait.catch(async (error: Error) => {
      throw new Error(`${error.message}; ${also()}; ${await diagnosis()}`);
    });
  const diagnosis = async () => {
    const counts = new Map<string, number>();
    const count = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
    for (const task of await statuses().catch((error: Error): JsonObject[] => [{ status: `unread (${error.message})` }])) {
      count(`task ${task.status}${task.status === "working" ? "" : `: ${task.statusMessage}`}`);
    }
    for (const line of gw.lines) if (Number(line.level) >= LEVEL.warn) count(`log ${line.event}: ${line.err ?? line.msg}`);
    return [...counts].map(([key, n]) => `${n}× ${key}`).join("; ");
  };
  after(async () => {
    if (gw?.child.exitCode === null) gw.child.kill("SIGCONT");
    if (legacy?.process.isRunning()) legacy.resume();
    await closeAll(
      () => gateways.close(),
      () => legacy?.close(),
    );
  });

  const statuses = async () =>
    Promise.all(
      taskIds.map(async (taskId) =>
        resultOf(await rpcWithin(ANSWER_WITHIN_MS, gw.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS })),
      ),
    );

  test("a stall of taskgate past the ping limit fails no task whose stream was alive", async (t) => {
    const before = await waitForMetric(gw.url, PINGS, { outcome: "answered" }, (n) => n >= 1, ANSWER_WITHIN_MS);
    // The faults themselves: the upstream stopped for a few ping intervals (each session sends a
    // ping it cannot answer yet), then taskgate frozen for two ping limits while the upstream,
    // running again, answers and streams on.
    legacy.pause();
    await new Promise((resolve) => setTimeout(resolve, 300));
    gw.child.kill("SIGSTOP");
    legacy.resume();
    await new Promise((resolve) => setTimeout(resolve, 2 * PING_TIMEOUT_MS));
    gw.child.kill("SIGCONT");

    // Liveness has been judged again since: a ping answered after the stall.
    const answeredBefore = before.value(PINGS, { outcome: "answered" });
    const afterStall = await explained(
      waitForMetric(gw.url, PINGS, { outcome: "answered" }, (n) => n > answeredBefore, ANSWER_WITHIN_MS),
      () => `${answeredBefore} pings answered before the stall`,
    );
    // Whether the stalled pings are judged late or simply answered depends on the event-loop phase
    // taskgate was frozen in (its timers first, or its sockets): either way no session may end.
    t.diagnostic(`pings judged late after the stall: ${afterStall.value(PINGS, { outcome: "late" })}`);
    assert.equal(afterStall.value(PINGS, { outcome: "missed" }), 0, "no session was called dead");
    assert.equal(afterStall.value("taskgate_upstream_errors_total", { reason: "upstream_unresponsive" }), 0);
    const tasks = await statuses();
    assert.deepEqual(
      tasks.filter((t) => t.status !== "working").map((t) => `${t.status}: ${t.statusMessage}`),
      [],
      "every task is still working",
    );
    assert.ok(
      tasks.every((t) => /^waited \d+ of \d+$/.test(String(t.statusMessage))),
      "every task shows progress from the upstream",
    );
    assert.equal(finished.length, 0, "no call ended upstream");
  });

  test("cancels on a stopped upstream each get an outcome; every call ends upstream, cancelled or with a reported session", async () => {
    const before = await scrape(gw.url);
    const sent = () => before.value(CANCELS, { outcome: "delivered" }) + before.value(CANCELS, { outcome: "undelivered" });
    legacy.pause();
    await Promise.all(
      taskIds.map(async (taskId) => {
        const reply = await rpcWithin(ANSWER_WITHIN_MS, gw.url, "tasks/cancel", { taskId }, { capabilities: TASKS_CAPS });
        assert.ok(reply.message.result, JSON.stringify(reply.message));
      }),
    );
    let total = 0;
    const counted = await explained(
      until(ANSWER_WITHIN_MS, `an outcome for each of the ${HELD} cancels`, async () => {
        const now = await scrape(gw.url);
        total = now.value(CANCELS, { outcome: "delivered" }) + now.value(CANCELS, { outcome: "undelivered" }) - sent();
        return total >= HELD ? now : undefined;
      }),
      () => `${total} outcomes counted`,
    );
    const undelivered = counted.value(CANCELS, { outcome: "undelivered" }) - before.value(CANCELS, { outcome: "undelivered" });
    assert.ok(undelivered >= 1, "a stopped upstream took no cancel: some were given up and reported");
    assert.equal(
      gw.lines.filter((line) => line.event === "upstream.cancel.undelivered").length,
      undelivered,
      "each undelivered cancel is logged",
    );
    // What ended those sessions (an undelivered cancel, or a ping nothing answered) is logged once per session.
    const ended = gw.lines.filter((line) => line.event === "upstream.session.ended.cancel" || line.event === "upstream.unresponsive");
    assert.ok(ended.length >= 1 && ended.length <= HELD / PER_SESSION, `${ended.length} sessions ended, each logged`);

    legacy.resume();
    await until(ANSWER_WITHIN_MS, `all ${HELD} calls ended upstream`, () => (finished.length >= HELD ? true : undefined));
    const outcomes = finished.map((e) => e.outcome);
    assert.deepEqual(
      outcomes.filter((o) => o !== "cancelled" && o !== "closed"),
      [],
      "every call ended cancelled or with its session",
    );
    const closed = outcomes.filter((o) => o === "closed").length;
    assert.ok(closed <= ended.length * PER_SESSION, `${closed} calls ended with their session: at most ${PER_SESSION} per session ended`);
    const tasks = await statuses();
    assert.ok(
      tasks.every((t) => t.status === "cancelled"),
      "every task is cancelled",
    );
  });
});
