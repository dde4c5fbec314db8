// A task's outcome outlives a store outage: the task store (a real, throwaway redis-server) is
// frozen (SIGSTOP) while a task's upstream call ends, so the write of its result fails with
// store_unavailable; once Redis answers again the task must read `completed` with its result, not
// stay `working` for ever (its call is over; nothing else would write it). Found by the chaos run.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { LegacyServer } from "../../examples/legacy-server/server.js";
import type { ToolFinishedEvent } from "../../examples/legacy-server/state.js";
import { rpcWithin } from "../support/boundedRpc.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import type { FaultGateway } from "../support/inProcessGateway.js";
import { ANSWER_WITHIN_MS, STORE_COMMAND_TIMEOUT_MS } from "../support/limits.js";
import { resultOf, TASKS_CAPS } from "../support/mcpClient.js";
import type { RedisProcess } from "../support/redisServer.js";
import { type RedisStoreGateway, startRedisStoreGateway } from "../support/redisStoreGateway.js";
import { pollTask } from "../support/tasks.js";
import { nextEvent } from "../support/waiting.js";

failIfStillRunning();

let stack: RedisStoreGateway;
let redis: RedisProcess;
let legacy: LegacyServer;
let gw: FaultGateway;

before(async () => {
  stack = await startRedisStoreGateway();
  ({ redis, legacy, gw } = stack);
});
after(() => stack?.close());

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
