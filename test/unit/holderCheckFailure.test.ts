// tasks/get of a task another instance holds asks the instance leases whether that holder still
// runs. The leases live in Redis: when it cannot answer — frozen (SIGSTOP: connections accepted,
// nothing answered) or stopped (connections refused) — the read must fail as 503 store_unavailable
// within store.commandTimeoutMs, naming why, never as a reason-less -32603 "Internal error" or a
// wait without end. The records sit in a memory store here, so only the lease look-up meets the fault.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { type Cluster, createCluster } from "../../src/cluster/createCluster.js";
import { ErrorCode, RpcError } from "../../src/protocol/errors.js";
import { createTaskStore } from "../../src/tasks/stores/createTaskStore.js";
import { TaskAccess } from "../../src/tasks/taskAccess.js";
import type { TaskRecord } from "../../src/tasks/taskRecord.js";
import { TaskRecords } from "../../src/tasks/taskRecords.js";
import { TaskRunner } from "../../src/tasks/taskRunner.js";
import { log } from "../support/desk.js";
import { runningTask } from "../support/heldTasks.js";
import { needsRedis, RedisProcess } from "../support/redisServer.js";

const COMMAND_TIMEOUT_MS = 400;

function assertStoreUnavailable(error: unknown): true {
  assert.ok(error instanceof RpcError, `an RpcError, got ${String(error)}`);
  assert.equal(error.code, ErrorCode.InternalError);
  assert.equal(error.httpStatus, 503);
  assert.equal((error.data as { reason?: unknown } | undefined)?.reason, "store_unavailable");
  assert.match(error.message, /instance there, which holds the task/);
  return true;
}

describe("a holder check the leases cannot answer", needsRedis, () => {
  let redis: RedisProcess;
  let cluster: Cluster<TaskRecord>;
  let access: TaskAccess;
  let records: TaskRecords;
  before(async () => {
    redis = await RedisProcess.start();
    cluster = await createCluster<TaskRecord>({
      kind: "redis",
      url: redis.url,
      prefix: `holdercheck-${randomUUID()}`,
      leaseMs: 5_000,
      instanceId: "here",
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
    });
    records = new TaskRecords(await createTaskStore({ kind: "memory" }), cluster.bus);
    const runner = new TaskRunner({ records, instanceId: "here", settings: { ttlMs: 60_000, pollIntervalMs: 1_000, inputKeys: {} }, log });
    access = new TaskAccess({ records, runner, instanceId: "here", leases: cluster.leases, link: cluster.link, log });
  });
  after(async () => {
    if (redis.isRunning()) redis.resume();
    await cluster.close();
    await redis.close();
  });

  it("Redis frozen: store_unavailable within store.commandTimeoutMs, naming that limit", async () => {
    await records.create(runningTask("frozen", "there"));
    redis.pause();
    const started = performance.now();
    try {
      await assert.rejects(access.get("owner", "frozen"), (error) => {
        assertStoreUnavailable(error);
        assert.match((error as Error).message, /did not answer within 400 ms \(store\.commandTimeoutMs\)/);
        return true;
      });
    } finally {
      redis.resume();
    }
    assert.ok(performance.now() - started < COMMAND_TIMEOUT_MS + 1_500, "answered within the limit");
  });

  it("Redis stopped: store_unavailable naming the leases, not a bare Internal error", async () => {
    await records.create(runningTask("stopped", "there"));
    await redis.stop();
    await assert.rejects(access.get("owner", "stopped"), (error) => {
      assertStoreUnavailable(error);
      assert.match((error as Error).message, /instance leases \(redis\)/);
      return true;
    });
    assert.equal((await records.get("stopped"))?.status, "working", "the task was not failed for a holder nobody could check");
  });
});
