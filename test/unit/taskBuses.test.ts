// Runs the shared TaskBus contract against InProcessTaskBus and RedisTaskBus, plus the Redis-only
// case that matters across instances: a record published on one bus reaches subscribers on another
// (two buses = two connection pairs = two instances). Redis is this file's own redis-server on a
// free port (skipped, saying why, without redis-server); channels live under a fresh random prefix.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { RedisTaskBus } from "../../src/cluster/redisTaskBus.js";
import { InProcessTaskBus } from "../../src/cluster/taskBus.js";
import type { TaskRecord } from "../../src/tasks/taskRecord.js";
import { needsRedis, REDIS_SKIP, testRedisUrl } from "../support/redisServer.js";
import { follow, taskBusContract } from "./taskBus.contract.js";
import { makeRecord } from "./taskStore.contract.js";

const url = await testRedisUrl();
const prefix = `taskgate-test-${randomUUID()}`;

taskBusContract("in-process", async () => new InProcessTaskBus<TaskRecord>());
taskBusContract("redis", () => RedisTaskBus.connect<TaskRecord>({ url, prefix }), REDIS_SKIP);

describe("RedisTaskBus across instances", needsRedis, () => {
  it("a record published on bus A reaches subscribers on bus B, and A's own subscribers exactly once", async () => {
    const [a, b] = await Promise.all([
      RedisTaskBus.connect<TaskRecord>({ url, prefix }),
      RedisTaskBus.connect<TaskRecord>({ url, prefix }),
    ]);
    try {
      const record = makeRecord({ holder: "instance-a" });
      const onB = follow(b, record.taskId);
      const onA = follow(a, record.taskId);
      a.publish(record);
      a.publish({ ...record, version: 2, status: "completed" });
      assert.deepEqual(
        (await onB.until(2)).map((r) => [r.version, r.status]),
        [
          [1, "working"],
          [2, "completed"],
        ],
      );
      assert.deepEqual(onB.records[0], record);
      await onA.until(2);
      await sleep(100); // an absence cannot be awaited: a duplicate (local emit + Redis echo) would be here by now
      assert.equal(onA.records.length, 2);
      assert.equal(onB.records.length, 2);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("buses under another prefix hear nothing", async () => {
    const [a, stranger] = await Promise.all([
      RedisTaskBus.connect<TaskRecord>({ url, prefix }),
      RedisTaskBus.connect<TaskRecord>({ url, prefix: `${prefix}-other` }),
    ]);
    try {
      const record = makeRecord();
      const mine = follow(a, record.taskId);
      const theirs = follow(stranger, record.taskId);
      a.publish(record);
      await mine.until(1);
      await sleep(100); // an absence cannot be awaited: a leak across prefixes would be here by now
      assert.deepEqual(theirs.records, []);
    } finally {
      await Promise.all([a.close(), stranger.close()]);
    }
  });

  it("publish after close is a no-op, close is idempotent", async () => {
    const bus = await RedisTaskBus.connect<TaskRecord>({ url, prefix });
    await bus.close();
    bus.publish(makeRecord());
    await bus.close();
  });
});
