// The chaos checker's cancel promise, as decision 0028 puts it: a tasks/cancel acknowledged ends its
// task cancelled or completed unless the task had ended before taskgate recorded the cancel. The
// checker dates that by the cancel's arrival at an instance (its request log line), not by its
// sending. Found by a chaos run: a task failed ("Upstream unreachable", an upstream restart) 11 ms
// after the cancel was sent and 260 ms before it reached an instance, and the checker, dating by
// the sending, counted it as a violation. A failure after the arrival still is one.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { check, type EndState } from "../../chaos/checker.js";
import type { Entry, Operation } from "../../chaos/history.js";
import type { HandedOut } from "../../chaos/users.js";

const T = 1_796_192_364_000;
const TASK: HandedOut = { taskId: "t1", identity: "id00", backend: "legacy", tool: "slow_echo", token: "hello", args: { text: "hello" } };
const END: EndState = { instances: [], orphanStdio: [], stdioPerInstance: {}, identities: 1, balancerSockets: [] };

function op(seq: number, kind: string, method: string, start: number, end: number, result: Record<string, unknown>): Operation {
  return {
    kind: "op",
    seq,
    user: 0,
    identity: "id00",
    op: kind,
    method,
    backend: "legacy",
    taskId: "t1",
    start,
    end,
    outcome: "ok",
    result,
  };
}

/** A task created at T, cancelled (sent T+100, acknowledged T+600), found failed at `failedAt`. */
function history(failedAt: number, arrived?: number): Entry[] {
  const failed = { resultType: "complete", taskId: "t1", status: "failed", lastUpdatedAt: new Date(failedAt).toISOString() };
  const entries: Entry[] = [
    op(1, "create", "tools/call", T, T + 50, { resultType: "task", taskId: "t1", status: "working" }),
    op(2, "cancel", "tasks/cancel", T + 100, T + 600, { resultType: "complete" }),
    op(3, "final", "tasks/get", T + 700, T + 710, failed),
  ];
  if (arrived !== undefined) entries.push({ kind: "served", instance: "a", method: "tasks/cancel", taskId: "t1", arrived });
  return entries;
}

const cancelViolations = (entries: Entry[]) => check(entries, [TASK], END).violations.cancel;

describe("the chaos checker: an acknowledged cancel against a failure", () => {
  it("failed after the cancel was sent but before it reached an instance: no promise broken", () => {
    assert.deepEqual(cancelViolations(history(T + 111, T + 370)), []);
  });

  it("failed after the cancel reached an instance: a violation", () => {
    const found = cancelViolations(history(T + 400, T + 370));
    assert.equal(found.length, 1);
    assert.match(found[0]!, /t1 \(slow_echo\): cancel #2 acknowledged, ended failed/);
  });

  it("no arrival seen: dated by its sending, as before", () => {
    assert.equal(cancelViolations(history(T + 111)).length, 1);
    assert.deepEqual(cancelViolations(history(T + 90)), []);
  });
});
