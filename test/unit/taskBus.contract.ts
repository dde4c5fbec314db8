// Shared TaskBus contract (see src/cluster/taskBus.ts), as a reusable node:test suite: a published
// record reaches every subscriber of its task id, in publish order, and nobody else; unsubscribing
// stops delivery; listenerCount counts. `open` gives a fresh bus per test (closed after it).
// Delivery may be synchronous or asynchronous, so cases wait for what they expect.

import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { TaskBus } from "../../src/cluster/taskBus.js";
import type { TaskRecord } from "../../src/tasks/taskRecord.js";
import { makeRecord } from "./taskStore.contract.js";

export type OpenTaskBus = () => Promise<TaskBus<TaskRecord>>;

/** Subscribes to taskId and records what arrives; until(n) waits for n records (or fails). */
export function follow(bus: TaskBus<TaskRecord>, taskId: string) {
  const records: TaskRecord[] = [];
  const waiters: Array<() => void> = [];
  const unsubscribe = bus.subscribe(taskId, (record) => {
    records.push(record);
    for (const wake of waiters.splice(0)) wake();
  });
  const until = async (n: number, timeoutMs = 2_000): Promise<TaskRecord[]> => {
    const deadline = Date.now() + timeoutMs;
    while (records.length < n) {
      const left = deadline - Date.now();
      if (left <= 0) assert.fail(`expected ${n} records for ${taskId}, got ${records.length}`);
      await Promise.race([new Promise<void>((wake) => waiters.push(wake)), sleep(left)]);
    }
    return records;
  };
  return { records, until, unsubscribe };
}

/** `skip`: why the bus's server cannot be used here (the suite is reported as skipped, with the reason). */
export function taskBusContract(name: string, open: OpenTaskBus, skip?: string): void {
  describe(`TaskBus contract: ${name}`, skip === undefined ? {} : { skip }, () => {
    let bus: TaskBus<TaskRecord>;

    beforeEach(async () => {
      bus = await open();
    });

    afterEach(async () => {
      await bus.close();
    });

    it("a published record reaches the subscribers of its id, in publish order", async () => {
      const taskId = makeRecord().taskId;
      const first = follow(bus, taskId);
      const second = follow(bus, taskId);
      const sent = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((version) =>
        makeRecord({ taskId, version, status: version === 10 ? "completed" : "working" }),
      );
      for (const record of sent) bus.publish(record);
      assert.deepEqual(await first.until(10), sent);
      assert.deepEqual(await second.until(10), sent);
    });

    it("a subscriber of all tasks gets the records of every id, until it unsubscribes", async () => {
      const [one, two] = [makeRecord(), makeRecord()];
      const seen: TaskRecord[] = [];
      let told: () => void = () => undefined;
      const both = new Promise<void>((resolve) => {
        told = resolve;
      });
      const stop = bus.subscribeAll((record) => {
        seen.push(record);
        if (seen.length === 2) told();
      });
      bus.publish(one);
      bus.publish(two);
      await both;
      assert.deepEqual(
        seen.map((record) => record.taskId),
        [one.taskId, two.taskId],
      );
      stop();
      const after = follow(bus, one.taskId);
      bus.publish({ ...one, version: 2 });
      await after.until(1);
      assert.equal(seen.length, 2);
    });

    it("a record does not reach subscribers of another id", async () => {
      const mine = makeRecord();
      const other = follow(bus, makeRecord().taskId);
      const target = follow(bus, mine.taskId);
      bus.publish(mine);
      bus.publish({ ...mine, version: 2 });
      await target.until(2);
      await sleep(50); // an absence cannot be awaited: anything misrouted would have arrived by now
      assert.deepEqual(other.records, []);
      assert.equal(target.records.length, 2);
    });

    it("unsubscribe stops delivery to that listener only", async () => {
      const taskId = makeRecord().taskId;
      const leaving = follow(bus, taskId);
      const staying = follow(bus, taskId);
      bus.publish(makeRecord({ taskId, version: 1 }));
      await leaving.until(1);
      leaving.unsubscribe();
      bus.publish(makeRecord({ taskId, version: 2 }));
      await staying.until(2);
      await sleep(50); // an absence cannot be awaited: a record for the leaver would be here by now
      assert.deepEqual(
        leaving.records.map((r) => r.version),
        [1],
      );
      assert.deepEqual(
        staying.records.map((r) => r.version),
        [1, 2],
      );
    });

    it("listenerCount counts the subscribers of an id", () => {
      const taskId = makeRecord().taskId;
      assert.equal(bus.listenerCount(taskId), 0);
      const a = follow(bus, taskId);
      const b = follow(bus, taskId);
      follow(bus, makeRecord().taskId);
      assert.equal(bus.listenerCount(taskId), 2);
      a.unsubscribe();
      assert.equal(bus.listenerCount(taskId), 1);
      b.unsubscribe();
      b.unsubscribe(); // unsubscribing twice is harmless
      assert.equal(bus.listenerCount(taskId), 0);
    });
  });
}
