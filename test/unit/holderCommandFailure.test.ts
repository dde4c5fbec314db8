// A command one instance sends the instance holding a task (an answer, a cancel, an operator's
// fail) may meet an error the holder did not expect (a bug, a runner that throws). The caller's
// client must get a named reason — -32603 `holder_failed` (HTTP 500) naming the task, the command
// and the cause — never a bare -32603. Errors the holder raises on purpose keep their own code
// and reason. Two instances ("here" sends, "there" holds) on a real Redis link, one memory store.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { isTaskCommand } from "../../src/cluster/holderLink.js";
import { ErrorCode, invalidParams, RpcError } from "../../src/protocol/errors.js";
import { TaskAccess, type TaskHolder } from "../../src/tasks/taskAccess.js";
import type { TaskRecords } from "../../src/tasks/taskRecords.js";
import { log } from "../support/desk.js";
import { type LinkedInstances, linkedInstances, runningTask } from "../support/heldTasks.js";
import { needsRedis } from "../support/redisServer.js";

/** The holder's runner: cancel throws a plain Error (unexpected), answer an RpcError (on purpose). */
const failingRunner: TaskHolder = {
  cancel: async () => {
    throw new Error("the runner broke");
  },
  answer: async () => {
    throw invalidParams("inputResponses.q: not an answer (the question stays open; send a corrected answer)");
  },
  fail: async () => {
    throw new TypeError("cannot read properties of undefined");
  },
  cancelArrives: () => undefined,
};

describe("an unexpected error on the holder of a task", needsRedis, () => {
  let linked: LinkedInstances;
  let here: TaskAccess;
  let there: TaskAccess;
  let records: TaskRecords;
  before(async () => {
    linked = await linkedInstances("holdercommand");
    records = linked.records;
    const parts = { records, runner: failingRunner, log };
    here = new TaskAccess({ ...parts, instanceId: "here", leases: linked.here.leases, link: linked.here.link });
    there = new TaskAccess({ ...parts, instanceId: "there", leases: linked.there.leases, link: linked.there.link });
    await linked.there.link.serve(async (command) => {
      assert.ok(isTaskCommand(command));
      return there.onCommand(command);
    });
  });
  after(() => linked.close());

  it("tasks/cancel: the holder replies holder_failed naming the task, the command and the cause", async () => {
    await records.create(runningTask("cancelled-badly", "there"));
    const reply = await there.onCommand({ kind: "cancel", taskId: "cancelled-badly", ownerHash: "owner" });
    assert.equal(reply.ok, false);
    assert.ok(!reply.ok);
    assert.equal(reply.error.code, ErrorCode.InternalError);
    assert.deepEqual(reply.error.data, { reason: "holder_failed", taskId: "cancelled-badly" });
    assert.match(reply.error.message, /holding task cancelled-badly could not carry out tasks\/cancel: the runner broke/);
    assert.equal(reply.httpStatus, 500);
  });

  it("through the link: the sender's client gets the same error, with HTTP 500", async () => {
    await records.create(runningTask("failed-badly", "there"));
    await assert.rejects(here.fail("owner", "failed-badly", "stuck"), (error) => {
      assert.ok(error instanceof RpcError, String(error));
      assert.equal(error.code, ErrorCode.InternalError);
      assert.equal(error.httpStatus, 500);
      assert.equal((error.data as { reason?: unknown }).reason, "holder_failed");
      assert.match(error.message, /could not carry out an operator's fail: cannot read properties of undefined/);
      return true;
    });
    assert.equal((await records.get("failed-badly"))?.status, "working", "the task is unchanged");
  });

  it("an error the holder raises on purpose keeps its code and reason (tasks/update refused: -32602)", async () => {
    await records.create(runningTask("answered-wrongly", "there"));
    await assert.rejects(here.update("owner", "answered-wrongly", { q: { action: "accept" } }), (error) => {
      assert.ok(error instanceof RpcError, String(error));
      assert.equal(error.code, ErrorCode.InvalidParams);
      assert.match(error.message, /the question stays open/);
      assert.equal(error.httpStatus, 200);
      return true;
    });
  });
});
