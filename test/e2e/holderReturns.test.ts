// A holder that only looked gone: taskgate A (a real child process on Redis) holds a task and is
// frozen (SIGSTOP). B fails the task as its holder is gone — or, asked to cancel it, ends it
// cancelled (an acknowledged cancel never ends `failed`). When A runs again it still has the
// upstream call; it must let go of it (stop it upstream) rather than keep a call running, or
// waiting for an answer nobody can send, for ever. Found by the chaos run (instances ended with held
// tasks and build_report calls still open upstream; acknowledged cancels ended `failed`).

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import type { ToolFinishedEvent, ToolStartedEvent } from "../../examples/legacy-server/state.js";
import { rpcWithin } from "../support/boundedRpc.js";
import { closeAll } from "../support/closeAll.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { type GatewayProcess, GatewayProcesses } from "../support/gatewayProcess.js";
import { ANSWER_WITHIN_MS, UPSTREAM_LIMITS } from "../support/limits.js";
import { resultOf, TASKS_CAPS } from "../support/mcpClient.js";
import { needsRedis, testRedisUrl } from "../support/redisServer.js";
import { health } from "../support/stack.js";
import { pollTask } from "../support/tasks.js";
import { nextEvent } from "../support/waiting.js";

failIfStillRunning();

const redisUrl = await testRedisUrl();

/** Longer than the holder link's 3 s: a holder frozen for one command's wait still holds its lease. */
const LONG_LEASE_MS = 10_000;
const SHORT_LEASE_MS = 1_000;
let legacy: LegacyServer;
const processes = new GatewayProcesses();
const prefix = `taskgate-test-${randomUUID()}`;

before(async () => {
  legacy = await startLegacyServer({ port: 0 });
});
after(() =>
  closeAll(
    () => processes.close(),
    () => legacy?.close(),
  ),
);

const config = (leaseMs: number) => ({
  store: { kind: "redis", url: redisUrl, prefix, leaseMs },
  upstream: { url: legacy.url, ...UPSTREAM_LIMITS },
  tasks: { tools: { slow_echo: "always" } },
});

/** A slow_echo task on `url`, once it runs upstream: its id and its upstream call. */
async function startTask(url: string): Promise<{ taskId: string; call: ToolStartedEvent }> {
  const started = nextEvent<ToolStartedEvent>(legacy.events, "tool-started", (e) => e.tool === "slow_echo", ANSWER_WITHIN_MS);
  const created = await rpcWithin(
    ANSWER_WITHIN_MS,
    url,
    "tools/call",
    { name: "slow_echo", arguments: { text: "x", ms: 120_000 } },
    {
      capabilities: TASKS_CAPS,
    },
  );
  return { taskId: resultOf(created).taskId as string, call: await started };
}

/** The upstream call's end, or an error saying the frozen holder still runs it (with its last log lines). */
const callEnds = (call: ToolStartedEvent, holder: GatewayProcess, ms: number) =>
  nextEvent<ToolFinishedEvent>(
    legacy.events,
    "tool-finished",
    (e) => e.requestId === call.requestId && e.sessionId === call.sessionId,
    ms,
  ).catch((error: Error) => {
    const last = holder.lines.slice(-8).map((line) => JSON.stringify(line));
    throw new Error(`${error.message}: A still runs the call of the task B ended; A's last lines:\n${last.join("\n")}`);
  });

test(
  "a cancel acknowledged while the holder does not answer ends the task cancelled, and the holder stops the call when it runs again",
  needsRedis,
  async () => {
    // Frozen for one command's wait (3 s), well within its lease: nobody takes it for dead.
    const a = await processes.start(config(LONG_LEASE_MS), "a2");
    const b = await processes.start(config(LONG_LEASE_MS), "b2");
    const { taskId, call } = await startTask(a.url);
    const ended = callEnds(call, a, LONG_LEASE_MS + ANSWER_WITHIN_MS);
    a.child.kill("SIGSTOP");
    try {
      const ack = await rpcWithin(ANSWER_WITHIN_MS, b.url, "tasks/cancel", { taskId }, { capabilities: TASKS_CAPS });
      assert.deepEqual(resultOf(ack), { resultType: "complete" });
      const task = resultOf(await rpcWithin(ANSWER_WITHIN_MS, b.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS }));
      assert.equal(task.status, "cancelled", JSON.stringify(task));
    } finally {
      a.child.kill("SIGCONT");
    }
    assert.equal((await ended).outcome, "cancelled", "A stopped the call upstream");
    assert.equal((await health(a.url)).heldTasks, 0, "A holds nothing any more");
  },
);

test(
  "a holder frozen past its lease, whose task another instance failed, stops the upstream call when it runs again",
  needsRedis,
  async () => {
    const a = await processes.start(config(SHORT_LEASE_MS), "a");
    const b = await processes.start(config(SHORT_LEASE_MS), "b");
    const { taskId, call } = await startTask(a.url);
    const ended = callEnds(call, a, ANSWER_WITHIN_MS * 2);
    a.child.kill("SIGSTOP");
    try {
      const failed = await pollTask(b.url, taskId, (t) => t.status === "failed", { timeoutMs: ANSWER_WITHIN_MS });
      assert.match(JSON.stringify(failed.error), /instance holding this task is gone/);
    } finally {
      a.child.kill("SIGCONT");
    }
    // Stopped by A when it runs again ("cancelled"), or already by B, which closes the upstream sessions of an instance whose lease is gone ("closed").
    assert.ok(["cancelled", "closed"].includes((await ended).outcome), "the call ended upstream");
    assert.equal((await health(a.url)).heldTasks, 0, "A holds nothing any more");
    assert.equal(
      resultOf(await rpcWithin(ANSWER_WITHIN_MS, a.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS })).status,
      "failed",
    );
  },
);
