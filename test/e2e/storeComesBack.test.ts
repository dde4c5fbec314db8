// A task's outcome outlives a store outage: the task store (a real, throwaway redis-server) is
// frozen (SIGSTOP) while a task's upstream call ends, so the write of its result fails with
// store_unavailable; once Redis answers again the task must read `completed` with its result, not
// stay `working` for ever (its call is over; nothing else would write it). Found by the chaos run.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import type { ToolFinishedEvent } from "../../examples/legacy-server/state.js";
import { rpcWithin } from "../support/boundedRpc.js";
import { closeAll } from "../support/closeAll.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { type FaultGateway, startFaultGateway } from "../support/inProcessGateway.js";
import { ANSWER_WITHIN_MS, STORE_COMMAND_TIMEOUT_MS, UPSTREAM_LIMITS } from "../support/limits.js";
import { resultOf, TASKS_CAPS } from "../support/mcpClient.js";
import { RedisProcess } from "../support/redisServer.js";
import { pollTask } from "../support/tasks.js";
import { nextEvent } from "../support/waiting.js";

failIfStillRunning();

let redis: RedisProcess;
let legacy: LegacyServer;
let gw: FaultGateway;

before(async () => {
  redis = await RedisProcess.start();
  legacy = await startLegacyServer({ port: 0 });
  gw = await startFaultGateway(legacy.url, {
    upstream: { ...UPSTREAM_LIMITS },
    store: { kind: "redis", url: redis.url, prefix: `faults-${randomUUID()}`, commandTimeoutMs: STORE_COMMAND_TIMEOUT_MS },
    tasks: { tools: { slow_echo: "always" } },
  });
});
after(() =>
  closeAll(
    () => gw?.close(),
    () => legacy?.close(),
    () => redis?.close(),
  ),
);

test("a result written while the store was frozen is written once it answers again", async () => {
  const created = await rpcWithin(
    ANSWER_WITHIN_MS,
    gw.url,
    "tools/call",
    { name: "slow_echo", arguments: { text: "kept", ms: 500 } },
    {
      capabilities: TASKS_CAPS,
    },
  );
  const taskId = resultOf(created).taskId as string;
  const finished = nextEvent<ToolFinishedEvent>(legacy.events, "tool-finished", (e) => e.tool === "slow_echo", ANSWER_WITHIN_MS);
  redis.pause();
  try {
    await finished;
    // Longer than the store's command limit: the first write of the result has failed by now.
    await new Promise((resolve) => setTimeout(resolve, STORE_COMMAND_TIMEOUT_MS * 2));
  } finally {
    redis.resume();
  }
  const done = await pollTask(gw.url, taskId, (t) => t.status === "completed", { timeoutMs: ANSWER_WITHIN_MS });
  assert.match(JSON.stringify(done.result), /kept/);
});
