// How the memory and file stores forget expired records: RecordTable reads treat a record past its
// deadline as absent at once, and sweep() drops expired rows from memory earliest-first, only the
// due ones, at most a chunk per call; startSweeper drives it from a timer and finishes a long sweep
// over several event-loop turns.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ExpiryQueue } from "../../src/tasks/stores/expiryQueue.js";
import { factsOf, RecordTable, SWEEP_CHUNK, startSweeper } from "../../src/tasks/stores/recordTable.js";
import type { TaskRecord } from "../../src/tasks/taskRecord.js";
import { eventually } from "../support/waiting.js";
import { makeRecord } from "./taskStore.contract.js";

function put(table: RecordTable, record: TaskRecord): void {
  table.put(record.taskId, JSON.stringify(record), factsOf(record));
}

describe("expiry of in-memory records", () => {
  it("ExpiryQueue pops entries in deadline order, only once they are due", () => {
    const queue = new ExpiryQueue();
    const deadlines = Array.from({ length: 500 }, (_, i) => ((i * 7919) % 500) + 1);
    deadlines.forEach((at, i) => queue.push(`t${i}`, at));
    assert.equal(queue.popDue(0), undefined);
    const popped: number[] = [];
    for (let due = queue.popDue(250); due; due = queue.popDue(250)) popped.push(due.at);
    assert.deepEqual(
      popped,
      [...deadlines].filter((at) => at <= 250).sort((a, b) => a - b),
    );
    assert.equal(queue.size, 250);
  });

  it("a record past its deadline is absent at once and swept later; live and unlimited ones stay", () => {
    const table = new RecordTable();
    const now = Date.now();
    const old = new Date(now - 10_000).toISOString();
    const expired = makeRecord({ createdAt: old, ttlMs: 5_000 });
    const live = makeRecord({ ttlMs: 60_000 });
    const forever = makeRecord({ ttlMs: null });
    for (const r of [expired, live, forever]) put(table, r);
    assert.equal(table.json(expired.taskId, now), undefined);
    assert.deepEqual(
      table
        .unfinished(now)
        .map((j) => (JSON.parse(j) as TaskRecord).taskId)
        .sort(),
      [live.taskId, forever.taskId].sort(),
    );
    const bytesBefore = table.liveBytes;
    assert.equal(table.size, 3);
    assert.equal(table.sweep(now), 1);
    assert.equal(table.size, 2);
    assert.ok(table.liveBytes < bytesBefore);
    assert.equal(table.sweep(now + 55_000), 0, "live is not due yet");
    assert.equal(table.sweep(now + 61_000), 1);
    assert.ok(table.json(forever.taskId, now + 10 ** 12));
  });

  it("an updated record is swept by its current deadline, not a stale queue entry", () => {
    const table = new RecordTable();
    const now = Date.now();
    const record = makeRecord({ ttlMs: 1_000 });
    put(table, record);
    put(table, { ...record, ttlMs: 100_000, version: 2 }); // deadline moved later
    assert.equal(table.sweep(now + 5_000), 0);
    assert.ok(table.json(record.taskId, now + 5_000));
    assert.equal(table.sweep(now + 200_000), 1);
  });

  it("sweep drops at most a chunk per call; startSweeper finishes a big sweep over several turns", async () => {
    const table = new RecordTable();
    const created = new Date(Date.now() - 1_000).toISOString();
    const count = SWEEP_CHUNK * 2 + 10;
    for (let i = 0; i < count; i++) put(table, makeRecord({ createdAt: created, ttlMs: 10, status: "completed" }));
    put(table, makeRecord({ ttlMs: null }));
    assert.equal(table.sweep(Date.now()), SWEEP_CHUNK);
    assert.equal(table.size, count + 1 - SWEEP_CHUNK);
    const stop = startSweeper(table, 20);
    try {
      await eventually(() => table.size <= 1, "the sweeper removed every expired row");
      assert.equal(table.unfinished(Date.now()).length, 1);
    } finally {
      stop();
    }
  });
});
