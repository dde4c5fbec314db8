// Issue 10, cases 2 and 4 (store half): the task store is a real, throwaway redis-server of its own
// on a free port. SIGSTOPped, it accepts connections and answers nothing: tasks/get, task
// creation and tasks/update must answer 503 store_unavailable within store.commandTimeoutMs, naming
// that option. Stopped, it refuses connections: the error names the store, the log says why
// (not `"err":"Error"`), and /metrics counts the store errors.

import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import type { JsonObject } from "../../src/protocol/wire.js";
import { rpcWithin } from "../support/boundedRpc.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { assertErrorReply } from "../support/expectError.js";
import type { FaultGateway } from "../support/inProcessGateway.js";
import { ANSWER_WITHIN_MS } from "../support/limits.js";
import { LEVEL } from "../support/logCapture.js";
import { resultOf, TASKS_CAPS } from "../support/mcpClient.js";
import { scrape } from "../support/metrics.js";
import { needsRedis, type RedisProcess } from "../support/redisServer.js";
import { type RedisStoreGateway, startRedisStoreGateway } from "../support/redisStoreGateway.js";
import { timed } from "../support/waiting.js";

failIfStillRunning();

const STORE_TIMEOUT = /^Task store unavailable: .*commandTimeoutMs/;
const slowEcho = { name: "slow_echo", arguments: { text: "x", ms: 60_000 } };

describe("the redis task store stops answering", needsRedis, () => {
  let stack: RedisStoreGateway;
  let redis: RedisProcess;
  let gw: FaultGateway;
  let taskId: string;
  beforeEach(async () => {
    stack = await startRedisStoreGateway();
    ({ redis, gw } = stack);
    const created = await rpcWithin(ANSWER_WITHIN_MS, gw.url, "tools/call", slowEcho, { capabilities: TASKS_CAPS });
    assert.equal(resultOf(created)?.status, "working", JSON.stringify(created.message));
    taskId = resultOf(created).taskId as string;
  });
  afterEach(() => stack?.close());

  test("Redis SIGSTOPped: tasks/get, task creation and tasks/update each answer 503 store_unavailable naming store.commandTimeoutMs", async (t) => {
    redis.pause();
    const expected = { http: 503, reason: "store_unavailable", message: STORE_TIMEOUT };
    const requests: Array<[string, string, JsonObject]> = [
      ["tasks/get", "tasks/get", { taskId }],
      ["task creation", "tools/call", slowEcho],
      ["tasks/update", "tasks/update", { taskId, inputResponses: { confirm: { action: "accept", content: {} } } }],
    ];
    for (const [what, method, params] of requests) {
      const { value: reply, ms } = await timed(() => rpcWithin(ANSWER_WITHIN_MS, gw.url, method, params, { capabilities: TASKS_CAPS }));
      assertErrorReply(reply, expected, what);
      t.diagnostic(`${what}: HTTP ${reply.status} after ${ms} ms`);
    }

    // Once Redis runs again, so does the store.
    redis.resume();
    const again = await rpcWithin(ANSWER_WITHIN_MS, gw.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS });
    assert.equal(resultOf(again)?.taskId, taskId, JSON.stringify(again.message));
  });

  test("Redis gone (stopped): tasks/get answers 503 store_unavailable naming the store, and the log says why", async (t) => {
    await redis.stop();
    const { value: get, ms } = await timed(() =>
      rpcWithin(ANSWER_WITHIN_MS, gw.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS }),
    );
    t.diagnostic(`tasks/get: HTTP ${get.status} after ${ms} ms`);
    const error = assertErrorReply(get, { http: 503, reason: "store_unavailable", message: /^Task store unavailable: / }, "tasks/get");
    assert.match(error.message, /redis/i, "the message names the store");
    const create = await rpcWithin(ANSWER_WITHIN_MS, gw.url, "tools/call", slowEcho, { capabilities: TASKS_CAPS });
    assertErrorReply(create, { http: 503, reason: "store_unavailable", message: /^Task store unavailable: / }, "task creation");

    const bare = gw.logs.lines.filter(
      (line) => line.err === "Error" || line.err === "" || (line.err as { message?: string } | undefined)?.message === "",
    );
    assert.deepEqual(bare, [], "no log line gives a store failure as a bare 'Error'");
    const warned = gw.logs.lines.filter((line) => line.level === LEVEL.warn && /store/i.test(JSON.stringify(line)));
    assert.ok(warned.length > 0, "the store failure is logged at warn");
    assert.deepEqual(gw.logs.withStack(), [], "an unavailable store is an expected failure: no stack");

    // What an operator's dashboard shows: store errors by operation, the requests as failed.
    const metrics = await scrape(gw.url);
    assert.ok(metrics.value("taskgate_store_errors_total", { operation: "get" }) >= 1);
    assert.ok(metrics.value("taskgate_store_errors_total", { operation: "create" }) >= 1);
    assert.ok(metrics.value("taskgate_requests_total", { method: "tasks/get", outcome: "failed" }) >= 1);
    assert.ok(
      metrics.value("taskgate_store_operation_duration_seconds_count", { operation: "get" }) >= 1,
      "failed operations are timed too",
    );
  });
});
