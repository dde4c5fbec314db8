// A task waiting for an answer whose upstream session ends (the upstream stops answering pings):
// its call fails, and its question goes with it. The task goes from input_required straight to
// failed; it never reads "working" in between, as if the question had been withdrawn while the
// call went on. A client that polls or follows the task at that moment would otherwise be told
// its question is gone and the work continues (found by the chaos run: a refused answer, then a
// poll that read "working").

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { closeAll } from "../support/closeAll.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { type FaultGateway, startFaultGateway } from "../support/inProcessGateway.js";
import { ANSWER_WITHIN_MS, UPSTREAM_LIMITS } from "../support/limits.js";
import { openListen } from "../support/listen.js";
import { TASKS_CAPS } from "../support/mcpClient.js";
import { LegacyProcess } from "../support/servers/legacyProcess.js";
import { createTask, hasStatus, TERMINAL, waitForTask } from "../support/tasks.js";

failIfStillRunning();

const statusOf = (frame: { params?: unknown }) => (frame.params as { status?: string } | undefined)?.status;

describe("a task waiting for input when its upstream session ends", () => {
  let legacy: LegacyProcess;
  let gw: FaultGateway;
  before(async () => {
    legacy = await LegacyProcess.start({ speed: 20 });
    gw = await startFaultGateway(legacy.url, { upstream: { ...UPSTREAM_LIMITS }, tasks: { tools: { build_report: "always" } } });
  });
  // The test thaws the upstream itself; close() is a SIGKILL, which ends a frozen one too.
  after(() =>
    closeAll(
      () => gw?.close(),
      () => legacy?.close(),
    ),
  );

  test("goes from input_required straight to failed", async () => {
    const { taskId } = await createTask(gw.url, "build_report", { month: "2026-11" });
    await waitForTask(gw.url, String(taskId), hasStatus("input_required"), { timeoutMs: ANSWER_WITHIN_MS });
    const stream = await openListen(gw.url, { taskIds: [taskId] }, { id: "follow", capabilities: TASKS_CAPS });
    try {
      await stream.waitFor((frame) => statusOf(frame) === "input_required", ANSWER_WITHIN_MS, "the task's state on listening");
      legacy.pause();
      const ended = await stream.waitFor((frame) => TERMINAL({ status: statusOf(frame) }), ANSWER_WITHIN_MS, "the task's end");
      assert.equal(statusOf(ended), "failed", JSON.stringify(ended));
      const seen = stream.frames.map(statusOf).filter((status) => status !== undefined);
      assert.deepEqual(seen, ["input_required", "failed"], `the statuses pushed: ${seen.join(" → ")}`);
    } finally {
      legacy.resume();
      stream.close();
    }
  });
});
