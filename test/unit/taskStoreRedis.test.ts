// The redis store's own behaviour beyond the shared contract: key layout, instances sharing one
// prefix, the compare-and-set that keeps another instance's write from being lost (the conflicting
// write is made by redis-cli, synchronously, between the store's read and its write), reading
// taskgate 0.1's keyv envelope, and limits: an unreachable Redis fails start at once, and a Redis
// that stops answering (our own throwaway redis-server, SIGSTOPped) makes every command reject
// within commandTimeoutMs, naming the store, instead of hanging.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { createClient } from "@redis/client";
import { createTaskStore } from "../../src/tasks/stores/createTaskStore.js";
import { listKey, positionOf } from "../../src/tasks/stores/taskListing.js";
import type { TaskRecord } from "../../src/tasks/taskRecord.js";
import type { TaskStore } from "../../src/tasks/taskStore.js";
import { needsRedis, RedisProcess, testRedisUrl } from "../support/redisServer.js";
import { connectTo, freshPrefix } from "../support/taskStores.js";
import { makeRecord } from "./taskStore.contract.js";

const REDIS_URL = await testRedisUrl();

const openRedis = (prefix: string, instanceId: string, extra: { maxUpdateAttempts?: number; sweepIntervalMs?: number } = {}) =>
  createTaskStore({ kind: "redis", connect: connectTo(REDIS_URL), label: REDIS_URL, prefix, instanceId, ...extra });

/** Sets a key on the test Redis synchronously (blocks this process until redis-cli is done). */
function redisCliSet(key: string, value: string): void {
  const { hostname, port } = new URL(REDIS_URL);
  execFileSync("redis-cli", ["-h", hostname, "-p", port, "SET", key, value], { stdio: "ignore", timeout: 5_000 });
}

describe("redis store", needsRedis, () => {
  const raw = createClient({ url: REDIS_URL });
  before(() => raw.connect());
  after(() => raw.close());

  it("lays keys out as <prefix>:task:<id> (JSON, PX expiry when the task has a ttl) and a SET <prefix>:index:unfinished:<instanceId>", async () => {
    const prefix = freshPrefix();
    const store = await openRedis(prefix, "instance-k");
    try {
      const expiring = makeRecord({ ttlMs: 60_000 });
      const forever = makeRecord({ ttlMs: null });
      await store.create(expiring);
      await store.create(forever);
      const keys: string[] = [];
      for await (const batch of raw.scanIterator({ MATCH: `${prefix}:*` })) keys.push(...batch);
      const owner = expiring.ownerHash;
      assert.deepEqual(
        keys.sort(),
        [
          `${prefix}:index:unfinished:instance-k`,
          `${prefix}:index:list:all`,
          `${prefix}:index:list:owner:${owner}`,
          `${prefix}:index:list:expiry`,
          `${prefix}:task:${expiring.taskId}`,
          `${prefix}:task:${forever.taskId}`,
        ].sort(),
      );
      const members = [expiring, forever].map((r) => listKey(positionOf(r))).sort();
      assert.deepEqual((await raw.zRange(`${prefix}:index:list:all`, 0, -1)).sort(), members);
      assert.deepEqual((await raw.zRange(`${prefix}:index:list:owner:${owner}`, 0, -1)).sort(), members);
      assert.deepEqual(await raw.zRangeWithScores(`${prefix}:index:list:expiry`, 0, -1), [
        { value: `${owner}\n${listKey(positionOf(expiring))}`, score: Date.parse(expiring.createdAt) + 60_000 },
      ]);
      assert.equal(await raw.get(`${prefix}:task:${forever.taskId}`), JSON.stringify(forever), "the record's own JSON, no envelope");
      const pttl = await raw.pTTL(`${prefix}:task:${expiring.taskId}`);
      assert.ok(pttl > 55_000 && pttl <= 60_000, `pttl ${pttl}`);
      assert.equal(await raw.pTTL(`${prefix}:task:${forever.taskId}`), -1);
      assert.equal(await raw.type(`${prefix}:index:unfinished:instance-k`), "set");
      assert.deepEqual((await raw.sMembers(`${prefix}:index:unfinished:instance-k`)).sort(), [expiring.taskId, forever.taskId].sort());
      await store.update(forever.taskId, (c) => ({ ...c, status: "completed" }));
      assert.deepEqual(
        await raw.sMembers(`${prefix}:index:unfinished:instance-k`),
        [expiring.taskId],
        "finishing removes it from the index in the same step",
      );
      assert.ok((await raw.pTTL(`${prefix}:task:${expiring.taskId}`)) > 55_000);
    } finally {
      await store.close();
    }
  });

  it("instances on one prefix read each other's records; each lists only its own unfinished ones", async () => {
    const prefix = freshPrefix();
    const a = await openRedis(prefix, "instance-a");
    const b = await openRedis(prefix, "instance-b");
    try {
      const fromA = makeRecord({ holder: "instance-a" });
      const fromB = makeRecord({ holder: "instance-b", ttlMs: 60_000 });
      await a.create(fromA);
      await b.create(fromB);
      await assert.rejects(b.create(fromA), /already exists/, "one id, one record, across instances");
      assert.deepEqual(await b.get(fromA.taskId), fromA);
      assert.deepEqual(await a.get(fromB.taskId), fromB);
      const done = await a.update(fromA.taskId, (c) => ({ ...c, status: "completed", result: { ok: true } }));
      assert.deepEqual(await b.get(fromA.taskId), done);
      assert.deepEqual(
        (await a.listUnfinished()).map((r) => r.taskId),
        [],
      );
      assert.deepEqual(
        (await b.listUnfinished()).map((r) => r.taskId),
        [fromB.taskId],
      );
      // Another instance finishing b's task: b's index drops it the next time b lists.
      await a.update(fromB.taskId, (c) => ({ ...c, status: "failed" }));
      assert.deepEqual(await b.listUnfinished(), []);
      assert.deepEqual(await raw.sMembers(`${prefix}:index:unfinished:instance-b`), []);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("a write by another instance between an update's read and its write is not lost: mutate runs again on the newer record", async () => {
    const prefix = freshPrefix();
    const store = await openRedis(prefix, "instance-a");
    try {
      const record = makeRecord();
      await store.create(record);
      const key = `${prefix}:task:${record.taskId}`;
      const seen: number[] = [];
      const updated = await store.update(record.taskId, (current) => {
        seen.push(current.version);
        // First run only: another writer fails the task while this update is between read and write.
        if (seen.length === 1)
          redisCliSet(key, JSON.stringify({ ...current, status: "failed", statusMessage: "holder gone", version: current.version + 1 }));
        return current.status === "failed" ? undefined : { ...current, statusMessage: "progress 50%" };
      });
      assert.deepEqual(seen, [record.version, record.version + 1], "mutate ran again on the other instance's write");
      assert.equal(updated?.status, "failed");
      assert.equal((await store.get(record.taskId))?.statusMessage, "holder gone", "the other write survived");
    } finally {
      await store.close();
    }
  });

  it("an update whose record keeps changing under it gives up after maxUpdateAttempts, naming the task, writing nothing", async () => {
    const prefix = freshPrefix();
    const store = await openRedis(prefix, "instance-a", { maxUpdateAttempts: 3 });
    try {
      const record = makeRecord();
      await store.create(record);
      const key = `${prefix}:task:${record.taskId}`;
      let runs = 0;
      await assert.rejects(
        store.update(record.taskId, (current) => {
          runs++;
          redisCliSet(key, JSON.stringify({ ...current, statusMessage: `other ${runs}`, version: current.version + 1 }));
          return { ...current, statusMessage: "mine" };
        }),
        new RegExp(`task store \\(redis ${REDIS_URL}\\): task ${record.taskId} was changed by another writer during each of 3 attempts`),
      );
      assert.equal(runs, 3);
      assert.equal((await store.get(record.taskId))?.statusMessage, "other 3");
    } finally {
      await store.close();
    }
  });

  it("reads a record left in taskgate 0.1's keyv envelope, and rewrites it plain on update", async () => {
    const prefix = freshPrefix();
    const store = await openRedis(prefix, "instance-a");
    try {
      const record = makeRecord({ status: "completed", result: { content: [] } });
      const key = `${prefix}:task:${record.taskId}`;
      await raw.set(key, JSON.stringify({ value: JSON.stringify(record), expires: null }));
      assert.deepEqual(await store.get(record.taskId), record);
      const next = await store.update(record.taskId, (c) => ({ ...c, statusMessage: "touched" }));
      assert.equal(await raw.get(key), JSON.stringify(next));
    } finally {
      await store.close();
    }
  });

  it("keeps working after Redis forgot its scripts (SCRIPT FLUSH, as after a Redis restart)", async () => {
    const prefix = freshPrefix();
    const store = await openRedis(prefix, "instance-a");
    try {
      const record = makeRecord();
      await store.create(record);
      await raw.scriptFlush();
      const second = makeRecord();
      await store.create(second);
      await raw.scriptFlush();
      assert.equal((await store.update(record.taskId, (c) => ({ ...c, statusMessage: "after flush" })))?.statusMessage, "after flush");
      assert.deepEqual((await store.listUnfinished()).map((r) => r.taskId).sort(), [record.taskId, second.taskId].sort());
    } finally {
      await store.close();
    }
  });

  it("listing: the sweep removes expired records' entries from every index; an update that moves a record moves its entries", async () => {
    const prefix = freshPrefix();
    const store = await openRedis(prefix, "instance-l", { sweepIntervalMs: 3_600_000 });
    try {
      const past = new Date(Date.now() - 60_000).toISOString();
      const expired = makeRecord({ createdAt: past, lastUpdatedAt: past, ttlMs: 1_000 });
      const kept = makeRecord({ ttlMs: 3_600_000 });
      await store.create(expired);
      await store.create(kept);
      const owner = `${prefix}:index:list:owner:${kept.ownerHash}`;
      assert.equal(await raw.zCard(owner), 2, "both entries until the sweep");
      assert.deepEqual(
        (await store.listAll({ limit: 10 })).records.map((r) => r.taskId),
        [kept.taskId],
      );
      assert.equal(await (store as unknown as { sweep(): Promise<number> }).sweep(), 1);
      assert.deepEqual(await raw.zRange(owner, 0, -1), [listKey(positionOf(kept))]);
      assert.deepEqual(await raw.zRange(`${prefix}:index:list:all`, 0, -1), [listKey(positionOf(kept))]);
      assert.equal(await raw.zCard(`${prefix}:index:list:expiry`), 1);

      const moved = await store.update(kept.taskId, (c) => ({ ...c, ownerHash: "d".repeat(64), ttlMs: null }));
      assert.equal(await raw.zCard(owner), 0);
      assert.deepEqual((await store.listByOwner("d".repeat(64), { limit: 5 })).records, [moved]);
      assert.equal(await raw.zCard(`${prefix}:index:list:expiry`), 0, "no ttl, no expiry entry");
    } finally {
      await store.close();
    }
  });

  it("an error Redis answers with rejects naming the store, and changes nothing", async () => {
    const prefix = freshPrefix();
    const store = await openRedis(prefix, "instance-w");
    try {
      await raw.set(`${prefix}:index:unfinished:instance-w`, "not a set"); // someone else's key in our place
      const record = makeRecord();
      await assert.rejects(store.create(record), new RegExp(`^Error: task store \\(redis ${REDIS_URL}\\): .*WRONGTYPE`));
      assert.equal(await raw.get(`${prefix}:task:${record.taskId}`), null, "the script failed before writing the record");
      await assert.rejects(store.listUnfinished(), /task store \(redis .*WRONGTYPE/);
    } finally {
      await store.close();
    }
  });

  it("an unreachable Redis fails createTaskStore at once with an error naming the store", async () => {
    const started = Date.now();
    await assert.rejects(
      createTaskStore({
        kind: "redis",
        connect: connectTo("redis://127.0.0.1:1"),
        label: "redis://127.0.0.1:1",
        prefix: "p",
        instanceId: "x",
      }),
      /^Error: task store \(redis redis:\/\/127\.0\.0\.1:1\): .*ECONNREFUSED/,
    );
    assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
  });

  it("refuses an empty prefix or instance id", async () => {
    await assert.rejects(openRedis("", "x"), /non-empty prefix and instanceId/);
    await assert.rejects(openRedis("p", ""), /non-empty prefix and instanceId/);
  });
});

describe("redis store: a Redis that stops answering (throwaway redis-server, SIGSTOP)", needsRedis, () => {
  let server: RedisProcess;
  let store: TaskStore;
  const TIMEOUT = 300;
  let record: TaskRecord;

  before(async () => {
    server = await RedisProcess.start();
    store = await createTaskStore({
      kind: "redis",
      connect: connectTo(server.url),
      label: server.url,
      prefix: "stop-test",
      instanceId: "i",
      commandTimeoutMs: TIMEOUT,
    });
    record = makeRecord();
    await store.create(record);
    server.pause();
  });
  after(() => server.close());

  const expected = () =>
    `task store (redis ${server.url}) did not answer within ${TIMEOUT} ms (store.commandTimeoutMs; the command may still be carried out)`;

  for (const [name, run] of [
    ["get", () => store.get(record.taskId)],
    ["create", () => store.create(makeRecord())],
    ["update", () => store.update(record.taskId, (c) => ({ ...c, statusMessage: "x" }))],
    ["listUnfinished", () => store.listUnfinished()],
  ] as const) {
    it(`${name} rejects within the limit, naming the store and the limit`, async () => {
      const started = Date.now();
      await assert.rejects(run(), (error: Error) => {
        assert.equal(error.message, expected());
        return true;
      });
      const took = Date.now() - started;
      assert.ok(took >= TIMEOUT - 5 && took < TIMEOUT + 1_000, `took ${took} ms`);
    });
  }

  it("close() ends within the limit too, and the store works again for a new connection once Redis answers", async () => {
    const started = Date.now();
    await store.close();
    assert.ok(Date.now() - started < TIMEOUT * 3 + 1_000, `close took ${Date.now() - started} ms`);
    server.resume();
    const again = await createTaskStore({
      kind: "redis",
      connect: connectTo(server.url),
      label: server.url,
      prefix: "stop-test",
      instanceId: "i",
    });
    try {
      assert.deepEqual(await again.get(record.taskId), record);
    } finally {
      await again.close();
    }
  });
});
