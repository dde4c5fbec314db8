// CallQuotas: per owner, held calls and running tasks, counted from a call's start until its
// upstream call ends; a held call that becomes a task moves over; admit() refuses (429, naming the
// quota) only what a new call may become; without limits nothing is counted.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CallQuotas } from "../../src/calls/callQuotas.js";
import { RpcError } from "../../src/protocol/errors.js";
import { ScriptedCall } from "../support/scriptedCall.js";

function refusedQuota(run: () => void): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof RpcError);
    assert.equal(error.httpStatus, 429);
    return (error.data as { quota: string }).quota;
  }
  assert.fail("expected a quota refusal");
}

describe("CallQuotas", () => {
  it("a held call counts until its upstream call ends; other owners are not affected", async () => {
    const quotas = new CallQuotas({ maxHeldCalls: 1 });
    const call = new ScriptedCall();
    quotas.admit("ada", { task: false, held: true });
    quotas.track(call, "ada", "held");
    assert.deepEqual(quotas.countsOf("ada"), { task: 0, held: 1 });
    assert.equal(
      refusedQuota(() => quotas.admit("ada", { task: false, held: true })),
      "quotas.maxHeldCalls",
    );
    quotas.admit("bob", { task: false, held: true });
    quotas.admit("ada", { task: true, held: false }); // a task-only call needs no held place
    call.finish({ content: [] });
    await call.outcome;
    await Promise.resolve();
    assert.deepEqual(quotas.countsOf("ada"), { task: 0, held: 0 });
    quotas.admit("ada", { task: false, held: true });
  });

  it("a held call that becomes a task moves over, and is counted once", async () => {
    const quotas = new CallQuotas({ maxRunningTasks: 1, maxHeldCalls: 5 });
    const call = new ScriptedCall();
    quotas.track(call, "ada", "held");
    quotas.track(call, "ada", "task");
    quotas.track(call, "ada", "task");
    assert.deepEqual(quotas.countsOf("ada"), { task: 1, held: 0 });
    assert.equal(
      refusedQuota(() => quotas.admit("ada", { task: true, held: true })),
      "quotas.maxRunningTasks",
    );
    call.abort("task cancelled by the client");
    await call.outcome;
    await Promise.resolve();
    assert.deepEqual(quotas.countsOf("ada"), { task: 0, held: 0 });
  });

  it("without limits nothing is counted or refused", () => {
    const quotas = new CallQuotas({});
    quotas.track(new ScriptedCall(), "ada", "held");
    assert.deepEqual(quotas.countsOf("ada"), { task: 0, held: 0 });
    quotas.admit("ada", { task: true, held: true });
  });
});
