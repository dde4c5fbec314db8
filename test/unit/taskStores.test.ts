// Runs the shared TaskStore contract against every backend createTaskStore() offers (memory, file),
// plus a few backend-specific checks: keyv ttl handed to the backend, and refusal of a corrupt file.
// File stores live in fresh fs.mkdtemp directories, removed when the suite ends.

import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
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
