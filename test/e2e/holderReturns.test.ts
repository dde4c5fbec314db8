// A holder that only looked gone: taskgate A (a real child process on Redis) holds a task, is
// frozen (SIGSTOP) past its lease, and B fails the task as its holder is gone. When A runs again
// it still has the upstream call; it must let go of it (stop it upstream) rather than keep a call
// running, or waiting for an answer nobody can send, for ever. Found by the chaos run (instances
// ended with held tasks and build_report calls still open upstream).

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import type { ToolFinishedEvent, ToolStartedEvent } from "../../examples/legacy-server/state.js";
import { rpcWithin } from "./faults/boundedRpc.js";
import { closeAll } from "./faults/closeAll.js";
import { failIfStillRunning } from "./faults/exitGuard.js";
import { GatewayProcesses } from "./faults/gatewayProcess.js";
import { ANSWER_WITHIN_MS, UPSTREAM_LIMITS } from "./faults/limits.js";
import { health, nextEvent, pollTask, resultOf, TASKS_CAPS } from "./kit.js";
import { deleteKeysUnder, REDIS_URL } from "./sharedRedisStack.js";

failIfStillRunning();

const LEASE_MS = 1_000;
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
    () => deleteKeysUnder(prefix),
  ),
);

test("a holder frozen past its lease, whose task another instance failed, stops the upstream call when it runs again", async () => {
  const config = {
    store: { kind: "redis", url: REDIS_URL, prefix, leaseMs: LEASE_MS },
    upstream: { url: legacy.url, ...UPSTREAM_LIMITS },
    tasks: { tools: { slow_echo: "always" } },
  };
  const a = await processes.start(config, "a");
  const b = await processes.start(config, "b");
  const started = nextEvent<ToolStartedEvent>(legacy.events, "tool-started", (e) => e.tool === "slow_echo", ANSWER_WITHIN_MS);
  const created = await rpcWithin(
    ANSWER_WITHIN_MS,
    a.url,
    "tools/call",
    { name: "slow_echo", arguments: { text: "x", ms: 120_000 } },
    {
      capabilities: TASKS_CAPS,
    },
  );
  const taskId = resultOf(created).taskId as string;
  const call = await started;

  a.child.kill("SIGSTOP");
  try {
    const failed = await pollTask(b.url, taskId, (t) => t.status === "failed", { timeoutMs: ANSWER_WITHIN_MS });
    assert.match(JSON.stringify(failed.error), /instance holding this task is gone/);
  } finally {
    a.child.kill("SIGCONT");
  }
  const ended = await nextEvent<ToolFinishedEvent>(
    legacy.events,
    "tool-finished",
    (e) => e.requestId === call.requestId && e.sessionId === call.sessionId,
    ANSWER_WITHIN_MS,
  ).catch((error: Error) => {
    throw new Error(`${error.message}: A still runs the call of the task B failed`);
  });
  assert.equal(ended.outcome, "cancelled", "A stopped the call upstream");
  assert.equal((await health(a.url)).heldTasks, 0, "A holds nothing any more");
  assert.equal(resultOf(await rpcWithin(ANSWER_WITHIN_MS, a.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS })).status, "failed");
});
