// Pending approvals on task records (a real memory store and the in-process task bus): the holder
// waiting on one hears the decision; the first decision wins; an approval nobody decides expires
// (and a late decision is refused); only the role, never the caller, may decide; a decision for
// other arguments is not this call's.
// Run: node --import tsx --test test/unit/approvals.test.ts

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Approvals, newApprovalId } from "../../src/access/approvals.js";
import { ownerHashOf } from "../../src/auth/identity.js";
import { InProcessTaskBus } from "../../src/cluster/taskBus.js";
import { MemoryTaskStore } from "../../src/tasks/stores/memoryTaskStore.js";
import type { StoredApproval, TaskRecord } from "../../src/tasks/taskRecord.js";
import { TaskRecords } from "../../src/tasks/taskRecords.js";

const alice = { subject: "alice" };
const carol = { subject: "carol", scopes: ["deployers"] };

async function setup(taskId: string, expiresInMs = 60_000) {
  const store = new MemoryTaskStore();
  const bus = new InProcessTaskBus<TaskRecord>();
  const records = new TaskRecords(store, bus);
  const now = new Date().toISOString();
  await records.create({
    taskId,
    status: "working",
    createdAt: now,
    lastUpdatedAt: now,
    ttlMs: 60_000,
    ownerHash: ownerHashOf(alice),
    tool: "deploy",
    holder: "here",
    version: 0,
  });
  const approval: StoredApproval = {
    approvalId: newApprovalId(taskId),
    caller: "alice",
    callerHash: ownerHashOf(alice),
    tool: "deploy",
    argumentsDigest: "digest-of-v1",
    rule: "approvals[0]",
    approver: { scopes: ["deployers"] },
    approverText: "scopes deployers",
    requestedAt: now,
    expiresAt: new Date(Date.now() + expiresInMs).toISOString(),
  };
  return { approvals: new Approvals(records, bus, store), records, approval };
}

describe("approvals on task records", () => {
  it("the holder hears the first decision; a second one is refused; the caller and outsiders cannot decide", async () => {
    const { approvals, records, approval } = await setup("t1");
    const waiting = approvals.wait("t1", approval, new AbortController().signal);
    await new Promise((resolve) => setImmediate(resolve));
    assert.match(String((await records.get("t1"))?.statusMessage), /waiting for approval by scopes deployers/);
    assert.deepEqual((await approvals.pendingFor(alice)).length, 0, "never the caller's own");
    assert.deepEqual(
      (await approvals.pendingFor(carol)).map((r) => r.taskId),
      ["t1"],
    );
    assert.equal((await approvals.decide(alice, "alice", approval.approvalId, "approve")).ok, false);
    assert.equal((await approvals.decide(carol, "carol", "t1.forged", "approve")).ok, false);
    assert.equal((await approvals.decide(carol, "carol", approval.approvalId, "deny", "not now")).ok, true);
    const second = await approvals.decide(carol, "carol", approval.approvalId, "approve");
    assert.ok(!second.ok && second.status === 409);
    assert.deepEqual({ ...(await waiting), at: "" }, { decision: "deny", by: "carol", reason: "not now", at: "" });
  });

  it("nobody decides in time: expired, and a late decision is refused", async () => {
    const { approvals, approval } = await setup("t2", 50);
    const decision = await approvals.wait("t2", approval, new AbortController().signal);
    assert.equal(decision.decision, "expired");
    const late = await approvals.decide(carol, "carol", approval.approvalId, "approve");
    assert.ok(!late.ok && late.status === 409, JSON.stringify(late));
  });

  it("a decision written for other arguments is not this call's", async () => {
    const { approvals, records, approval } = await setup("t3", 200);
    const waiting = approvals.wait("t3", approval, new AbortController().signal);
    await new Promise((resolve) => setImmediate(resolve));
    await records.write("t3", (current) => ({
      ...current,
      approval: { ...approval, argumentsDigest: "digest-of-v2", decision: { decision: "approve", by: "mallory", at: "now" } },
    }));
    assert.equal((await waiting).decision, "expired", "the approve for v2 did not let v1 through");
  });
});
