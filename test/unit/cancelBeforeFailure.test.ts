// An acknowledged tasks/cancel ends the task `cancelled` or `completed`, never `failed`, when the
// task was still running as taskgate received it (decision 0028). The race the chaos run found: the
// holder, frozen past its lease, had its upstream session closed by a survivor; when it ran again the
// call's failure was written just before the cancel it had been sent was handled, and the cancel —
// finding the task ended — was acknowledged, the task `failed`. Here the holder's runner plays that
// order exactly (its cancel first writes the call's failure, then finds the task ended), over a real
// Redis link between two instances; a failure written by a survivor (holder gone) after the cancel
// is recorded is the same race. A completion still wins; a task that ended before the cancel stays.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { isTaskCommand } from "../../src/cluster/holderLink.js";
import { TaskAccess, type TaskHolder } from "../../src/tasks/taskAccess.js";
import type { TaskRecord } from "../../src/tasks/taskRecord.js";
import { failedRecord, type TaskRecords } from "../../src/tasks/taskRecords.js";
import { log } from "../support/desk.js";
import { type LinkedInstances, linkedInstances, runningTask } from "../support/heldTasks.js";
import { needsRedis } from "../support/redisServer.js";

const SESSION_CLOSED = "Upstream call lost: taskgate closed the upstream session";

describe("a tasks/cancel against the failure of its call", needsRedis, () => {
  let linked: LinkedInstances;
  let here: TaskAccess;
  let records: TaskRecords;
  /** What the holder's call does just before the cancel is handled there. */
  let endsFirst: (current: TaskRecord) => TaskRecord;
  before(async () => {
    linked = await linkedInstances("cancelrace");
    records = linked.records;
    // The holder woke up: its call's end is written first; the cancel then finds nothing live to stop.
    const holder: TaskHolder = {
      cancel: async (taskId) => void (await records.write(taskId, endsFirst)),
      answer: async () => undefined,
      fail: async () => undefined,
      cancelArrives: () => undefined,
    };
    const there = new TaskAccess({
      records,
      runner: holder,
      instanceId: "there",
      leases: linked.there.leases,
      link: linked.there.link,
      log,
    });
    here = new TaskAccess({ records, runner: holder, instanceId: "here", leases: linked.here.leases, link: linked.here.link, log });
    await linked.there.link.serve(async (command) => {
      assert.ok(isTaskCommand(command) && command.kind === "cancel");
      return there.onCommand(command);
    });
  });
  after(() => linked.close());

  it("the call's failure written just before the holder handles the cancel: the task ends cancelled, the failure named", async () => {
    endsFirst = (current) => failedRecord(current, SESSION_CLOSED);
    await records.create(runningTask("failed-first", "there", 1_000));
    await here.cancel("owner", "failed-first");
    const ended = await records.get("failed-first");
    assert.equal(ended?.status, "cancelled", `ended ${ended?.status}: ${ended?.statusMessage}`);
    assert.match(
      ended?.statusMessage ?? "",
      /^Cancelled by the client \(its call ended meanwhile: .*taskgate closed the upstream session\)$/,
    );
    assert.equal(ended?.error, undefined, "a cancelled task carries no error");
  });

  it("the call's result written first: the task stays completed (the work won the race)", async () => {
    endsFirst = (current) => ({ ...current, status: "completed", result: { content: [] }, lastUpdatedAt: new Date().toISOString() });
    await records.create(runningTask("completed-first", "there", 1_000));
    await here.cancel("owner", "completed-first");
    assert.equal((await records.get("completed-first"))?.status, "completed");
  });

  it("a failure any instance writes once the cancel is recorded (a survivor: holder gone) ends it cancelled", async () => {
    await records.create(runningTask("survivor", "there", 1_000));
    await records.write("survivor", (current) => ({ ...current, cancelRequestedAt: new Date().toISOString() }));
    await records.write("survivor", (current) => failedRecord(current, "the taskgate instance holding this task is gone"));
    assert.equal((await records.get("survivor"))?.status, "cancelled");
  });

  it("a task that had failed before the cancel came stays failed (the cancel is acknowledged, nothing changes)", async () => {
    await records.create(runningTask("failed-before", "there", 1_000));
    await records.write("failed-before", (current) => failedRecord(current, SESSION_CLOSED));
    await here.cancel("owner", "failed-before");
    const ended = await records.get("failed-before");
    assert.equal(ended?.status, "failed");
    assert.equal(ended?.cancelRequestedAt, undefined, "a cancel of an ended task is not recorded");
  });
});
