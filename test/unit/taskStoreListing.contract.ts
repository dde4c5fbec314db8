// The listing part of the shared TaskStore contract (listByOwner / listAll, see src/tasks/taskStore.ts),
// registered by taskStoreContract inside its describe, so each case gets the fresh store of that suite.

import assert from "node:assert/strict";
import { it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { TaskRecord } from "../../src/tasks/taskRecord.js";
import { InvalidCursorError, LIST_SCAN_LIMIT, type TaskListQuery, type TaskStore } from "../../src/tasks/taskStore.js";
import { makeRecord } from "./taskStore.contract.js";

const OWNER = "a".repeat(64);
const OTHER = "b".repeat(64);

/** A record created `secondsAgo` before a fixed instant, so the expected order is known. */
const at = (secondsAgo: number, overrides: Partial<TaskRecord> = {}): TaskRecord => {
  const createdAt = new Date(Date.now() - secondsAgo * 1_000).toISOString();
  return makeRecord({ createdAt, lastUpdatedAt: createdAt, ...overrides });
};

const taskIds = (records: TaskRecord[]) => records.map((r) => r.taskId);

/** Every page of a listing, following nextCursor to the end (bounded, so a cursor loop fails the test). */
async function allPages(
  list: (query: TaskListQuery) => Promise<{ records: TaskRecord[]; nextCursor?: string | undefined }>,
  query: TaskListQuery,
) {
  const pages: TaskRecord[][] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 1_000; n++) {
    const page = await list({ ...query, cursor });
    pages.push(page.records);
    if (page.nextCursor === undefined) return pages;
    cursor = page.nextCursor;
  }
  throw new Error("listing did not end within 1,000 pages");
}

export function listingCases(store: () => TaskStore, reopen: () => Promise<TaskStore>, traits: { persistent: boolean }): void {
  const persistenceCase = traits.persistent ? it : () => undefined;

  it("listing: one owner's records, newest first by createdAt instant then taskId, others' left out", async () => {
    const s = store();
    const old = at(30);
    // 20 s ago written at +02:00: as text it sorts after the others, as an instant it is the third newest.
    const mid = at(20, { createdAt: new Date(Date.now() - 20_000 + 7_200_000).toISOString().replace("Z", "+02:00") });
    const newest = at(10);
    const tieA = at(15, { taskId: "tie-a" });
    const tieB = { ...tieA, taskId: "tie-b" };
    const foreign = at(5, { ownerHash: OTHER });
    for (const r of [mid, foreign, old, tieA, newest, tieB]) await s.create(r);
    const page = await s.listByOwner(OWNER, { limit: 10 });
    assert.deepEqual(taskIds(page.records), taskIds([newest, tieB, tieA, mid, old]));
    assert.equal(page.nextCursor, undefined);
    assert.deepEqual(page.records[0], newest);
    assert.deepEqual(taskIds((await s.listByOwner(OTHER, { limit: 10 })).records), [foreign.taskId]);
    assert.deepEqual((await s.listByOwner("c".repeat(64), { limit: 10 })).records, []);
  });

  it("listing: listAll covers every owner in the same order", async () => {
    const s = store();
    const records = [at(3), at(2, { ownerHash: OTHER }), at(1)];
    for (const r of records) await s.create(r);
    assert.deepEqual(taskIds((await s.listAll({ limit: 10 })).records), taskIds([...records].reverse()));
  });

  it("listing: pages of 3 walk all 10 records once, in order, and the last page has no cursor", async () => {
    const s = store();
    const records = Array.from({ length: 10 }, (_, i) => at(100 - i));
    await Promise.all(records.map((r) => s.create(r)));
    const pages = await allPages((q) => s.listByOwner(OWNER, q), { limit: 3 });
    assert.deepEqual(
      pages.map((p) => p.length),
      [3, 3, 3, 1],
    );
    assert.deepEqual(taskIds(pages.flat()), taskIds([...records].reverse()));
    const exact = await allPages((q) => s.listAll(q), { limit: 5 });
    assert.deepEqual(
      exact.map((p) => p.length),
      [5, 5],
    );
  });

  it("listing: records created between pages do not repeat or shift the next page", async () => {
    const s = store();
    const records = Array.from({ length: 6 }, (_, i) => at(100 - i));
    for (const r of records) await s.create(r);
    const first = await s.listByOwner(OWNER, { limit: 3 });
    const newer = [at(1), at(0)];
    for (const r of newer) await s.create(r);
    const second = await s.listByOwner(OWNER, { limit: 3, cursor: first.nextCursor });
    assert.deepEqual(taskIds(second.records), taskIds(records.slice(0, 3).reverse()));
    assert.deepEqual(taskIds((await s.listByOwner(OWNER, { limit: 3 })).records), taskIds([newer[1]!, newer[0]!, records[5]!]));
  });

  it("listing: status, tool and backend filters, alone and together, see the current record", async () => {
    const s = store();
    const a = at(5, { tool: "echo", backend: "east" });
    const b = at(4, { tool: "sum", backend: "west", status: "input_required" });
    const c = at(3, { tool: "echo", status: "completed", result: { content: [] } });
    const d = at(2, { tool: "echo", backend: "west" });
    for (const r of [a, b, c, d]) await s.create(r);
    const list = async (query: Omit<TaskListQuery, "limit">) => taskIds((await s.listByOwner(OWNER, { limit: 10, ...query })).records);
    assert.deepEqual(await list({ statuses: ["working"] }), taskIds([d, a]));
    assert.deepEqual(await list({ statuses: ["working", "input_required"] }), taskIds([d, b, a]));
    assert.deepEqual(await list({ tool: "echo" }), taskIds([d, c, a]));
    assert.deepEqual(await list({ backend: "west" }), taskIds([d, b]));
    assert.deepEqual(await list({ tool: "echo", backend: "west", statuses: ["working"] }), taskIds([d]));
    assert.deepEqual(await list({ tool: "nope" }), []);
    assert.deepEqual(await list({ statuses: [] }), []);
    // An update moves a record between filters at once.
    await s.update(a.taskId, (r) => ({ ...r, status: "failed" }));
    assert.deepEqual(await list({ statuses: ["working"] }), taskIds([d]));
    assert.deepEqual(await list({ statuses: ["failed"] }), taskIds([a]));
    assert.equal((await s.listByOwner(OWNER, { limit: 10, statuses: ["failed"] })).records[0]?.version, a.version + 1);
  });

  it("listing: a filtered page goes on past non-matching records and pages correctly", async () => {
    const s = store();
    const records = Array.from({ length: 40 }, (_, i) => at(100 - i, { tool: i % 4 === 0 ? "rare" : "common" }));
    await Promise.all(records.map((r) => s.create(r)));
    const rare = records.filter((r) => r.tool === "rare").reverse();
    const pages = await allPages((q) => s.listByOwner(OWNER, q), { limit: 4, tool: "rare" });
    assert.deepEqual(taskIds(pages.flat()), taskIds(rare));
    assert.deepEqual(pages[0]?.length, 4);
  });

  it("listing: expired records never appear (also when the page would otherwise be full)", async () => {
    const s = store();
    const expiredAtCreate = at(60, { ttlMs: 30_000 });
    const soon = at(1, { ttlMs: 2_500 });
    const kept = at(3);
    for (const r of [expiredAtCreate, soon, kept]) await s.create(r);
    assert.deepEqual(taskIds((await s.listByOwner(OWNER, { limit: 10 })).records), taskIds([soon, kept]));
    while ((await s.get(soon.taskId)) !== undefined) await sleep(50);
    assert.deepEqual(taskIds((await s.listByOwner(OWNER, { limit: 1 })).records), [kept.taskId]);
    assert.deepEqual(taskIds((await s.listAll({ limit: 10 })).records), [kept.taskId]);
  });

  it("listing: a cursor the store did not issue rejects with InvalidCursorError; a bad limit with a RangeError", async () => {
    const s = store();
    await s.create(at(1));
    for (const cursor of ["", "not a cursor!", "eyJ4IjoxfQ", Buffer.from('["t1","x","id"]').toString("base64url")]) {
      await assert.rejects(s.listByOwner(OWNER, { limit: 5, cursor }), InvalidCursorError, `cursor ${JSON.stringify(cursor)}`);
    }
    await assert.rejects(s.listAll({ limit: 5, cursor: "%%%" }), InvalidCursorError);
    for (const limit of [0, -1, 501, 2.5, Number.NaN]) {
      await assert.rejects(s.listByOwner(OWNER, { limit }), RangeError, `limit ${limit}`);
    }
    assert.equal((await s.listByOwner(OWNER, { limit: 500 })).records.length, 1);
  });

  it("listing: a page with a very selective filter stops after the scan limit and goes on by cursor", async () => {
    const s = store();
    const match = at(10_000, { tool: "needle" });
    await s.create(match);
    const hay = Array.from({ length: LIST_SCAN_LIMIT + 10 }, (_, i) => at(i, { tool: "hay" }));
    for (let i = 0; i < hay.length; i += 500) await Promise.all(hay.slice(i, i + 500).map((r) => s.create(r)));
    // A store that filters while it scans (memory, file, redis, keyv) stops short; one that filters in
    // its query (postgres) may find the match at once. Either way the walk ends with exactly it.
    const first = await s.listByOwner(OWNER, { limit: 5, tool: "needle" });
    if (first.records.length === 0) assert.ok(first.nextCursor, "a stopped scan gives a cursor to go on");
    const pages = await allPages((q) => s.listByOwner(OWNER, q), { limit: 5, tool: "needle" });
    assert.deepEqual(taskIds(pages.flat()), [match.taskId]);
    assert.ok(pages.length <= 3, `${pages.length} pages for ${hay.length + 1} records`);
  });

  persistenceCase("listing: after reopen the same pages come back, and new records join the index", async () => {
    const s = store();
    const records = Array.from({ length: 7 }, (_, i) => at(50 - i, { ownerHash: i % 2 === 0 ? OWNER : OTHER }));
    for (const r of records) await s.create(r);
    const again = await reopen();
    const mine = records.filter((r) => r.ownerHash === OWNER).reverse();
    assert.deepEqual(taskIds((await allPages((q) => again.listByOwner(OWNER, q), { limit: 2 })).flat()), taskIds(mine));
    const added = at(0);
    await again.create(added);
    assert.deepEqual(taskIds((await again.listAll({ limit: 1 })).records), [added.taskId]);
  });
}
