// Shared TaskStore contract (see src/tasks/taskStore.ts): every backend must pass these node:test cases.
// `open` gives a fresh, empty store per test; `reopen` (persistent backends only) opens another store
// on the data as it is right now, without closing the first one, as if its process had been killed
// (file: a copy of the journal as it is on disk; redis: a new store on the same prefix and instance id).

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { TaskRecord } from "../../src/tasks/taskRecord.js";
import type { TaskStore } from "../../src/tasks/taskStore.js";
import { listingCases } from "./taskStoreListing.contract.js";
import { pushCases } from "./taskStorePush.contract.js";

export type OpenTaskStore = () => Promise<{ store: TaskStore; reopen?: () => Promise<TaskStore> }>;

export function makeRecord(overrides: Partial<TaskRecord> = {}): TaskRecord {
  const now = new Date().toISOString();
  return {
    taskId: randomUUID(),
    status: "working",
    createdAt: now,
    lastUpdatedAt: now,
    ttlMs: null,
    ownerHash: "a".repeat(64),
    tool: "echo",
    holder: "instance-1",
    version: 1,
    ...overrides,
  };
}

const ids = (records: TaskRecord[]) => records.map((r) => r.taskId).sort();
const finish = (record: TaskRecord): TaskRecord => ({ ...record, status: "completed", result: { content: [] } });

/** `persistent`: the backend keeps records across close+reopen; only then are the persistence cases registered. */
/** `skip`: why the backend's server cannot be used here (the suite is reported as skipped, with the reason). */
/** `shared`: a reopened store is another instance on the same data (redis, postgres), not a restart's copy. */
export function taskStoreContract(
  name: string,
  open: OpenTaskStore,
  traits: { persistent: boolean; shared?: boolean; skip?: string | undefined },
): void {
  // Registered or not, never silently skipped: a non-persistent backend simply has no such cases.
  const persistenceCase = traits.persistent ? it : () => undefined;
  describe(`TaskStore contract: ${name}`, traits.skip === undefined ? {} : { skip: traits.skip }, () => {
    let store: TaskStore;
    let reopenFn: (() => Promise<TaskStore>) | undefined;
    const opened: TaskStore[] = [];

    /** Opens another store on the same data (tracked for closing). */
    const reopen = async (): Promise<TaskStore> => {
      if (reopenFn === undefined) throw new Error("a persistent backend must provide reopen");
      const again = await reopenFn();
      opened.push(again);
      return again;
    };

    beforeEach(async () => {
      const result = await open();
      store = result.store;
      reopenFn = result.reopen;
      opened.push(store);
    });

    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    it("create then get finds the record", async () => {
      const record = makeRecord({ statusMessage: "starting", pollIntervalMs: 500 });
      await store.create(record);
      assert.deepEqual(await store.get(record.taskId), record);
    });

    it("get of an unknown id is undefined", async () => {
      assert.equal(await store.get("no-such-task"), undefined);
    });

    it("records are copies: mutating a returned or created object does not change the store", async () => {
      const record = makeRecord();
      await store.create(record);
      record.status = "failed";
      const got = await store.get(record.taskId);
      assert.ok(got);
      got.statusMessage = "sneaky";
      assert.equal((await store.get(record.taskId))?.statusMessage, undefined);
      assert.equal((await store.get(record.taskId))?.status, "working");
      assert.deepEqual(ids(await store.listUnfinished()), [record.taskId]);
    });

    it("duplicate create throws and leaves the original", async () => {
      const record = makeRecord();
      await store.create(record);
      await assert.rejects(store.create({ ...record, tool: "other" }), /already exists/);
      assert.equal((await store.get(record.taskId))?.tool, "echo");
    });

    it("concurrent creates of one id: exactly one succeeds", async () => {
      const record = makeRecord();
      const results = await Promise.allSettled([store.create(record), store.create({ ...record, tool: "b" })]);
      assert.deepEqual(results.map((r) => r.status).sort(), ["fulfilled", "rejected"]);
    });

    it("create of a record that cannot be stored rejects naming the problem, and stores nothing", async () => {
      const bad = makeRecord({ createdAt: "not a date" });
      await assert.rejects(store.create(bad), /createdAt is not a parseable date/);
      await assert.rejects(store.create(makeRecord({ taskId: "" })), /non-empty taskId/);
      await assert.rejects(store.create(makeRecord({ ttlMs: -5 })), /ttlMs must be null or a non-negative/);
      assert.equal(await store.get(bad.taskId), undefined);
      assert.deepEqual(await store.listUnfinished(), []);
    });

    it("update mutates, bumps version, persists and returns the new record", async () => {
      const record = makeRecord();
      await store.create(record);
      const updated = await store.update(record.taskId, (current) => ({
        ...current,
        status: "input_required",
        statusMessage: "need input",
      }));
      assert.equal(updated?.status, "input_required");
      assert.equal(updated?.statusMessage, "need input");
      assert.equal(updated?.version, record.version + 1);
      assert.deepEqual(await store.get(record.taskId), updated);
    });

    it("version rule: each write stores version = stored version + 1, whatever mutate put there", async () => {
      const record = makeRecord({ version: 7 });
      await store.create(record);
      const first = await store.update(record.taskId, (current) => ({ ...current, version: 99, statusMessage: "a" }));
      assert.equal(first?.version, 8);
      const second = await store.update(record.taskId, (current) => ({ ...current, version: 0, statusMessage: "b" }));
      assert.equal(second?.version, 9);
      const unchanged = await store.update(record.taskId, () => undefined);
      assert.equal(unchanged?.version, 9);
      assert.equal((await store.get(record.taskId))?.version, 9);
    });

    it("update of an unknown id is undefined and mutate is not called", async () => {
      let called = false;
      const result = await store.update("no-such-task", (current) => {
        called = true;
        return current;
      });
      assert.equal(result, undefined);
      assert.equal(called, false);
    });

    it("mutate returning undefined leaves the record unchanged (even if it edited its argument)", async () => {
      const record = makeRecord();
      await store.create(record);
      const result = await store.update(record.taskId, (current) => {
        current.status = "failed";
        return undefined;
      });
      assert.deepEqual(result, record);
      assert.deepEqual(await store.get(record.taskId), record);
      assert.deepEqual(ids(await store.listUnfinished()), [record.taskId]);
    });

    it("mutate that throws rejects the update with its error and changes nothing", async () => {
      const record = makeRecord();
      await store.create(record);
      await assert.rejects(
        store.update(record.taskId, () => {
          throw new Error("mutate refused");
        }),
        /mutate refused/,
      );
      assert.deepEqual(await store.get(record.taskId), record);
    });

    it("an update that changes the taskId or makes the record unstorable rejects and changes nothing", async () => {
      const record = makeRecord();
      await store.create(record);
      await assert.rejects(
        store.update(record.taskId, (c) => ({ ...c, taskId: "other" })),
        /tried to change its taskId/,
      );
      await assert.rejects(
        store.update(record.taskId, (c) => ({ ...c, createdAt: "yesterday-ish" })),
        /createdAt is not a parseable date/,
      );
      assert.deepEqual(await store.get(record.taskId), record);
      assert.equal(await store.get("other"), undefined);
    });

    it("50 concurrent updates appending to a list lose nothing", async () => {
      const record = makeRecord();
      await store.create(record);
      const keys = Array.from({ length: 50 }, (_, i) => `key-${i}`);
      await Promise.all(
        keys.map((key) =>
          store.update(record.taskId, (current) => ({
            ...current,
            inputRequests: { ...current.inputRequests, [key]: { method: "roots/list", params: {} } },
          })),
        ),
      );
      const final = await store.get(record.taskId);
      assert.deepEqual(Object.keys(final?.inputRequests ?? {}).sort(), [...keys].sort());
      assert.equal(final?.version, record.version + 50);
    });

    it("TTL: a record is found at once and gone after createdAt + ttlMs", async () => {
      const record = makeRecord({ ttlMs: 200 });
      await store.create(record);
      assert.ok(await store.get(record.taskId));
      assert.deepEqual(ids(await store.listUnfinished()), [record.taskId]);
      await sleep(400); // time passing is what is tested: the ttl runs out
      assert.equal(await store.get(record.taskId), undefined);
      let called = false;
      const updated = await store.update(record.taskId, (current) => {
        called = true;
        return current;
      });
      assert.equal(updated, undefined);
      assert.equal(called, false);
      assert.deepEqual(await store.listUnfinished(), []);
    });

    it("TTL counts from createdAt, not from the write", async () => {
      const old = new Date(Date.now() - 60_000).toISOString();
      const record = makeRecord({ createdAt: old, lastUpdatedAt: old, ttlMs: 30_000 });
      await store.create(record);
      assert.equal(await store.get(record.taskId), undefined);
      assert.deepEqual(await store.listUnfinished(), []);
    });

    it("an id whose record has expired can be created again", async () => {
      const record = makeRecord({ ttlMs: 100 });
      await store.create(record);
      await sleep(250); // time passing is what is tested: the ttl runs out
      const again = makeRecord({ taskId: record.taskId, tool: "second" });
      await store.create(again);
      assert.deepEqual(await store.get(record.taskId), again);
      assert.deepEqual(ids(await store.listUnfinished()), [record.taskId]);
    });

    it("ttlMs null never expires", async () => {
      const ancient = "2000-01-01T00:00:00.000Z";
      const record = makeRecord({ createdAt: ancient, lastUpdatedAt: ancient, ttlMs: null });
      await store.create(record);
      assert.deepEqual(await store.get(record.taskId), record);
      assert.deepEqual(ids(await store.listUnfinished()), [record.taskId]);
    });

    it("listUnfinished returns only working and input_required records", async () => {
      const working = makeRecord({ status: "working" });
      const asking = makeRecord({ status: "input_required" });
      const done = makeRecord({ status: "completed", result: { content: [] } });
      const failed = makeRecord({ status: "failed" });
      const cancelled = makeRecord({ status: "cancelled" });
      const finishing = makeRecord({ status: "working" });
      for (const r of [working, asking, done, failed, cancelled, finishing]) await store.create(r);
      assert.deepEqual(ids(await store.listUnfinished()), ids([working, asking, finishing]));

      await store.update(finishing.taskId, (c) => ({ ...c, status: "completed", result: { ok: true } }));
      const unfinished = await store.listUnfinished();
      assert.deepEqual(ids(unfinished), ids([working, asking]));
      assert.deepEqual(
        unfinished.find((r) => r.taskId === working.taskId),
        working,
      );
    });

    it("index: after 1,000 creates and 600 finishes (some reopened), listUnfinished is exactly the open ones", async () => {
      const records = Array.from({ length: 1_000 }, (_, i) => makeRecord({ ttlMs: i % 2 === 0 ? null : 3_600_000 }));
      await Promise.all(records.map((r) => store.create(r)));
      const finished = records.slice(0, 600);
      await Promise.all(finished.map((r) => store.update(r.taskId, finish)));
      // A finished task that becomes unfinished again is back in the index.
      const revived = finished.slice(0, 10);
      await Promise.all(revived.map((r) => store.update(r.taskId, (c) => ({ ...c, status: "working" }))));
      const expected = ids([...records.slice(600), ...revived]);
      assert.deepEqual(ids(await store.listUnfinished()), expected);
    });

    persistenceCase("persistence: records (finished ones with result too) survive close and reopen", async () => {
      const running = makeRecord({ status: "working" });
      const asking = makeRecord({ status: "input_required", inputRequests: {} });
      const finished = makeRecord();
      await store.create(running);
      await store.create(asking);
      await store.create(finished);
      const completed = await store.update(finished.taskId, (c) => ({
        ...c,
        status: "completed",
        result: { content: [{ type: "text", text: 'done "quoted"\nnext line ✓' }], structuredContent: { n: 42 } },
      }));
      await store.close();

      const again = await reopen();
      assert.deepEqual(await again.get(running.taskId), running);
      assert.deepEqual(await again.get(asking.taskId), asking);
      assert.deepEqual(await again.get(finished.taskId), completed);
      assert.deepEqual(ids(await again.listUnfinished()), ids([running, asking]));
      // The reopened store keeps working: updates continue from the stored version.
      const next = await again.update(running.taskId, (c) => ({ ...c, status: "failed" }));
      assert.equal(next?.version, running.version + 1);
      assert.deepEqual(ids(await again.listUnfinished()), [asking.taskId]);
    });

    persistenceCase("persistence: writes are stored as soon as create/update resolve (no close, as if killed)", async () => {
      const records = Array.from({ length: 20 }, () => makeRecord({ result: { blob: "x".repeat(2_000) } }));
      // Concurrent writes, so some land while an earlier disk write is still in flight.
      await Promise.all(records.map((r) => store.create(r)));
      await Promise.all(records.map((r) => store.update(r.taskId, (c) => ({ ...c, statusMessage: "k", status: "completed" }))));
      await store.create(makeRecord({ taskId: "last-one" }));

      const again = await reopen(); // the first store is NOT closed: nothing gets flushed for us
      for (const r of records) {
        const got = await again.get(r.taskId);
        assert.equal(got?.version, r.version + 1, `task ${r.taskId} update lost`);
        assert.equal(got?.status, "completed");
      }
      assert.ok(await again.get("last-one"));
      assert.deepEqual(ids(await again.listUnfinished()), ["last-one"]);
    });

    persistenceCase("persistence: a write that lands while a slow write is in flight is stored when it resolves", async () => {
      // A big record makes one write slow; small creates keep arriving until it has finished.
      let bigDone = false;
      const big = store.create(makeRecord({ status: "completed", result: { blob: "x".repeat(4_000_000) } })).finally(() => {
        bigDone = true;
      });
      const small: TaskRecord[] = [];
      const writes: Promise<void>[] = [];
      while (!bigDone) {
        const record = makeRecord({ status: "completed" });
        small.push(record);
        writes.push(store.create(record));
        await sleep(1);
      }
      await Promise.all([big, ...writes]);

      const again = await reopen(); // first store still open, never flushed by close()
      const missing: string[] = [];
      for (const r of small) if ((await again.get(r.taskId)) === undefined) missing.push(r.taskId);
      assert.deepEqual(missing, [], `${missing.length} of ${small.length} resolved creates not stored`);
    });

    persistenceCase("persistence: listUnfinished after reopen is exactly the open ones, after many creates and finishes", async () => {
      const records = Array.from({ length: 300 }, () => makeRecord());
      await Promise.all(records.map((r) => store.create(r)));
      await Promise.all(records.slice(0, 200).map((r) => store.update(r.taskId, finish)));
      const again = await reopen();
      assert.deepEqual(ids(await again.listUnfinished()), ids(records.slice(200)));
      // and the reopened store's index keeps working
      await again.update(records[250]!.taskId, finish);
      assert.equal((await again.listUnfinished()).length, 99);
    });

    listingCases(() => store, reopen, traits);
    pushCases(() => store, reopen, traits);

    it("operations after close reject, naming the store", async () => {
      await store.close();
      await assert.rejects(store.get("x"), /task store .*closed/);
      await assert.rejects(store.create(makeRecord()), /closed/);
      await store.close(); // idempotent
    });

    it("close waits for writes already started", async () => {
      const records = Array.from({ length: 20 }, () => makeRecord());
      const writes = records.map((r) => store.create(r));
      await store.close();
      const results = await Promise.allSettled(writes);
      assert.deepEqual(
        results.filter((r) => r.status === "rejected"),
        [],
      );
      if (traits.persistent) {
        const again = await reopen();
        for (const r of records) assert.deepEqual(await again.get(r.taskId), r);
      }
    });
  });
}
