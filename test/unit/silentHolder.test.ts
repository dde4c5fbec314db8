// A command whose holder says nothing (decision 0045): two instances on a real Redis link and
// lease, one memory store of records; "there" holds the tasks and never serves its link (a holder
// frozen, or whose subscriber lost the message), while its lease lives. An answer must not end a
// task whose holder still holds its lease: the client gets 503 holder_unresponsive and the task
// goes on. A holder whose lease is gone has its task failed; a cancel and an operator's fail are
// written without the holder, as asked.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ErrorCode, RpcError } from "../../src/protocol/errors.js";
import { SHUTDOWN } from "../../src/protocol/reasons.js";
import { TaskAccess, type TaskHolder } from "../../src/tasks/taskAccess.js";
import type { TaskRecords } from "../../src/tasks/taskRecords.js";
import { log } from "../support/desk.js";
import { type LinkedInstances, linkedInstances, runningTask } from "../support/heldTasks.js";
import { needsRedis } from "../support/redisServer.js";

/** Nothing is held on "here": every command goes over the link. */
const nothingHere: TaskHolder = {
  answer: async () => assert.fail("answered here"),
  cancel: async () => assert.fail("cancelled here"),
  fail: async () => assert.fail("failed here"),
  cancelArrives: () => undefined,
};

describe("a task's holder that does not answer", needsRedis, () => {
  let linked: LinkedInstances;
  let here: TaskAccess;
  let records: TaskRecords;
  before(async () => {
    linked = await linkedInstances("silentholder");
    records = linked.records;
    await linked.there.leases.start(); // "there" runs (its lease lives) but serves nothing on its link
    here = new TaskAccess({ records, runner: nothingHere, instanceId: "here", leases: linked.here.leases, link: linked.here.link, log });
  });
  after(() => linked.close());

  it("tasks/update while its lease lives: 503 holder_unresponsive naming the task, and the task goes on", async () => {
    assert.equal(await linked.here.leases.isAlive("there"), true);
    await records.create(runningTask("paused-holder", "there"));
    await assert.rejects(here.update("owner", "paused-holder", { q: { action: "accept", content: { q: true } } }), (error) => {
      assert.ok(error instanceof RpcError, String(error));
      assert.equal(error.code, ErrorCode.InternalError);
      assert.equal(error.httpStatus, 503);
      assert.deepEqual(error.data, { reason: "holder_unresponsive", taskId: "paused-holder" });
      assert.match(error.message, /holding task paused-holder did not take tasks\/update \(no answer within 3000 ms, or not listening\)/);
      assert.match(error.message, /its lease says it still runs .*may still reach it; read the task before sending it again/);
      return true;
    });
    const record = await records.get("paused-holder");
    assert.deepEqual([record?.status, record?.statusMessage], ["working", undefined], "the task is unchanged");
  });

  it("tasks/update once its lease is gone: the task fails, its holder gone, and the answer is acknowledged", async () => {
    await records.create(runningTask("dead-holder", "gone"));
    await here.update("owner", "dead-holder", { q: { action: "accept", content: { q: true } } });
    const record = await records.get("dead-holder");
    assert.deepEqual([record?.status, record?.statusMessage], ["failed", SHUTDOWN.holderGone]);
  });

  it("an operator's fail is written without it, with the operator's reason", async () => {
    await records.create(runningTask("stuck", "there"));
    await here.fail("owner", "stuck", "stuck for a day");
    const record = await records.get("stuck");
    assert.deepEqual([record?.status, record?.statusMessage], ["failed", "stuck for a day"]);
  });

  it("tasks/cancel is written without it: the task ends cancelled", async () => {
    await records.create(runningTask("unwanted", "there"));
    await here.cancel("owner", "unwanted");
    const record = await records.get("unwanted");
    assert.equal(record?.status, "cancelled");
    assert.match(String(record?.statusMessage), /did not answer/);
  });
});
