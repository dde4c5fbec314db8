// Runs the shared TaskStore contract against every backend createTaskStore() offers (memory, file, redis),
// plus backend-specific checks: keyv ttl, refusal of a corrupt file, Redis cross-instance reads and startup.
// File stores live in fresh fs.mkdtemp directories; Redis (127.0.0.1:6379) keys under a fresh random prefix,
// deleted (SCAN + DEL of that prefix only) when the suite ends.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { createClient } from "@keyv/redis";
import { Keyv } from "keyv";
import { createTaskStore, sweepExpired } from "../../src/tasks/stores/createTaskStore.js";
import { KeyvTaskStore } from "../../src/tasks/stores/keyvTaskStore.js";
import { makeRecord, taskStoreContract } from "./taskStore.contract.js";

const root = await mkdtemp(path.join(tmpdir(), "taskgate-stores-"));
after(() => rm(root, { recursive: true, force: true }));

taskStoreContract("memory", async () => ({ store: await createTaskStore({ kind: "memory" }) }), { persistent: false });

taskStoreContract("file", async () => {
  const dir = await mkdtemp(path.join(root, "file-"));
  const file = path.join(dir, "nested", "tasks.json"); // parent dir does not exist yet
  return {
    store: await createTaskStore({ kind: "file", path: file }),
    reopen: () => createTaskStore({ kind: "file", path: file }),
  };
}, { persistent: true });

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redisPrefix = `taskgate-test-${randomUUID()}`;
after(async () => {
  const client = createClient({ url: REDIS_URL });
  await client.connect();
  try {
    for await (const keys of client.scanIterator({ MATCH: `${redisPrefix}*`, COUNT: 500 })) {
      if (keys.length > 0) await client.del(keys);
    }
  } finally {
    await client.close();
  }
});

/** A redis store with its own instance id (a fresh sub-prefix per test keeps tests apart). */
const openRedis = (prefix: string, instanceId: string) =>
  createTaskStore({ kind: "redis", url: REDIS_URL, prefix, instanceId });

taskStoreContract("redis", async () => {
  const prefix = `${redisPrefix}:${randomUUID().slice(0, 8)}`;
  return { store: await openRedis(prefix, "instance-a"), reopen: () => openRedis(prefix, "instance-a") };
}, { persistent: true });

describe("redis backend", () => {
  it("instances on one prefix read each other's records; each lists only its own unfinished ones", async () => {
    const prefix = `${redisPrefix}:${randomUUID().slice(0, 8)}`;
    const a = await openRedis(prefix, "instance-a");
    const b = await openRedis(prefix, "instance-b");
    try {
      const fromA = makeRecord({ holder: "instance-a" });
      const fromB = makeRecord({ holder: "instance-b", ttlMs: 60_000 });
      await a.create(fromA);
      await b.create(fromB);
      assert.deepEqual(await b.get(fromA.taskId), fromA);
      assert.deepEqual(await a.get(fromB.taskId), fromB);
      // The holder's updates are visible to the other instance at once.
      const done = await a.update(fromA.taskId, (c) => ({ ...c, status: "completed", result: { ok: true } }));
      assert.deepEqual(await b.get(fromA.taskId), done);
      assert.deepEqual((await a.listUnfinished()).map((r) => r.taskId), []);
      assert.deepEqual((await b.listUnfinished()).map((r) => r.taskId), [fromB.taskId]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("lays keys out as <prefix>:task:<id> (with a PX expiry) and <prefix>:index:unfinished:<instanceId>", async () => {
    const prefix = `${redisPrefix}:${randomUUID().slice(0, 8)}`;
    const store = await openRedis(prefix, "instance-k");
    const client = createClient({ url: REDIS_URL });
    await client.connect();
    try {
      const expiring = makeRecord({ ttlMs: 60_000 });
      const forever = makeRecord({ ttlMs: null });
      await store.create(expiring);
      await store.create(forever);
      const keys: string[] = [];
      for await (const batch of client.scanIterator({ MATCH: `${prefix}:*` })) keys.push(...batch);
      assert.deepEqual(
        keys.sort(),
        [`${prefix}:index:unfinished:instance-k`, `${prefix}:task:${expiring.taskId}`, `${prefix}:task:${forever.taskId}`].sort(),
      );
      const pttl = await client.pTTL(`${prefix}:task:${expiring.taskId}`);
      assert.ok(pttl > 55_000 && pttl <= 60_000, `pttl ${pttl}`);
      assert.equal(await client.pTTL(`${prefix}:task:${forever.taskId}`), -1);
      assert.equal(await client.pTTL(`${prefix}:index:unfinished:instance-k`), -1);
    } finally {
      await store.close();
      await client.close();
    }
  });

  it("an unreachable Redis fails createTaskStore promptly with an error naming store.url (password hidden)", async () => {
    const started = Date.now();
    await assert.rejects(
      createTaskStore({ kind: "redis", url: "redis://user:hunter2@127.0.0.1:1", prefix: redisPrefix, instanceId: "x" }),
      (error: Error) => {
        assert.match(error.message, /store\.url redis:\/\/user:\*\*\*@127\.0\.0\.1:1/);
        assert.ok(!error.message.includes("hunter2"), error.message);
        return true;
      },
    );
    assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
  });
});

describe("KeyvTaskStore backend details", () => {
  it("passes the remaining ttl to keyv, and none for ttlMs null even with a Keyv default ttl", async () => {
    const keyv = new Keyv({ ttl: 1_000 });
    const store = new KeyvTaskStore(keyv);
    const expiring = makeRecord({ ttlMs: 60_000 });
    const forever = makeRecord({ ttlMs: null });
    await store.create(expiring);
    await store.create(forever);
    const expires = (await keyv.getRaw(`task:${expiring.taskId}`))?.expires;
    assert.ok(typeof expires === "number");
    assert.ok(Math.abs(expires - (Date.parse(expiring.createdAt) + 60_000)) < 1_000);
    assert.equal((await keyv.getRaw(`task:${forever.taskId}`))?.expires, undefined);
    await store.close();
  });

  it("refuses to open a corrupt store file instead of starting empty", async () => {
    const dir = await mkdtemp(path.join(root, "corrupt-"));
    const file = path.join(dir, "tasks.json");
    await writeFile(file, '{"cache":[["taskgate:task:1"');
    await assert.rejects(createTaskStore({ kind: "file", path: file }), /not valid JSON/);
  });
});

describe("memory backend housekeeping", () => {
  it("sweeps expired records nobody reads again, keeping live and unlimited ones", async () => {
    const map = new Map<string, unknown>();
    const keyv = new Keyv({ store: map, namespace: "sweep" });
    const store = new KeyvTaskStore(keyv);
    const old = new Date(Date.now() - 10_000).toISOString();
    const expired = makeRecord({ createdAt: old, lastUpdatedAt: old, ttlMs: 60_000, status: "completed" });
    const live = makeRecord({ ttlMs: 60_000, status: "completed" });
    const forever = makeRecord({ ttlMs: null, status: "completed" });
    for (const record of [expired, live, forever]) await store.create(record);
    const before = map.size;
    // 1 minute later the first one is past its deadline; nobody has read it.
    assert.equal(sweepExpired(map, Date.now() + 55_000), 1);
    assert.equal(map.size, before - 1);
    assert.equal(await store.get(expired.taskId), undefined);
    assert.equal((await store.get(live.taskId))?.taskId, live.taskId);
    assert.equal((await store.get(forever.taskId))?.taskId, forever.taskId);
    await store.close();
  });
});
