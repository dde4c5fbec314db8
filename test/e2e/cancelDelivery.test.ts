// Cancels that arrive, against a real upstream (the example legacy server as a child process)
// SIGSTOPped while a task's call runs, then the task is cancelled: the notifications/cancelled
// cannot be delivered; taskgate sends it again (upstream.cancelAttempts), counts every outcome
// (taskgate_upstream_cancels_total), and once it gives up logs it and ends that call's session,
// so the call cannot go on unseen; when the upstream runs again the call ends there.
// Run: node --import tsx --test test/e2e/cancelDelivery.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { ToolFinishedEvent } from "../../examples/legacy-server/state.js";
import { rpcWithin } from "../support/boundedRpc.js";
import { closeAll } from "../support/closeAll.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { type FaultGateway, startFaultGateway } from "../support/inProcessGateway.js";
import { ANSWER_WITHIN_MS, UPSTREAM_LIMITS } from "../support/limits.js";
import { TASKS_CAPS } from "../support/mcpClient.js";
import { scrape, waitForMetric } from "../support/metrics.js";
import { LegacyProcess } from "../support/servers/legacyProcess.js";
import { startSlowTask } from "../support/slowTask.js";

failIfStillRunning();

const CANCELS = "taskgate_upstream_cancels_total";

describe("a cancel the upstream cannot take (SIGSTOPped upstream)", () => {
  let legacy: LegacyProcess;
  let gw: FaultGateway;
  before(async () => {
    legacy = await LegacyProcess.start();
    gw = await startFaultGateway(legacy.url, {
      // Pings far apart: what ends the session here must be the undelivered cancel, not a missed ping.
      upstream: { ...UPSTREAM_LIMITS, pingIntervalMs: 600_000, cancelAttempts: 2, cancelRetryMs: 100 },
      tasks: { tools: { slow_echo: "always" } },
    });
  });
  after(async () => {
    if (legacy?.process.isRunning()) legacy.resume();
    await closeAll(
      () => gw?.close(),
      () => legacy?.close(),
    );
  });

  test("is sent again, counted, logged, and ends that call's session; the call ends upstream once it runs again", async () => {
    const { taskId, requestId } = await startSlowTask(legacy, gw.url);
    const before = await scrape(gw.url);
    assert.equal(before.find(CANCELS, { outcome: "undelivered" }), 0);

    legacy.pause();
    const cancelled = await rpcWithin(ANSWER_WITHIN_MS, gw.url, "tasks/cancel", { taskId }, { capabilities: TASKS_CAPS });
    assert.ok(cancelled.message.result, `tasks/cancel: ${JSON.stringify(cancelled.message)}`);

    const after = await waitForMetric(gw.url, CANCELS, { outcome: "undelivered" }, 1, ANSWER_WITHIN_MS);
    assert.equal(after.find(CANCELS, { outcome: "retried" }), 1, "one more attempt was made before giving up");
    assert.equal(after.find(CANCELS, { outcome: "delivered" }), 0);
    const undelivered = gw.logs.mentioning("upstream.cancel.undelivered");
    assert.equal(undelivered.length, 1, "one warn line says the cancel could not be delivered");
    assert.equal(undelivered[0]?.attempts, 2);
    assert.equal(gw.logs.mentioning("upstream.session.ended.cancel").length, 1, "and one says the call's session was ended");

    const ended = legacy.next<ToolFinishedEvent>("tool-finished", (e) => e.tool === "slow_echo" && e.requestId === requestId);
    legacy.resume();
    const { outcome } = await ended;
    assert.ok(["cancelled", "closed"].includes(outcome), `slow_echo ended upstream with outcome ${outcome}`);

    // The identity's next call gets a fresh session and works.
    const greet = await rpcWithin(ANSWER_WITHIN_MS, gw.url, "tools/call", { name: "greet", arguments: { name: "again" } });
    assert.ok(greet.message.result, JSON.stringify(greet.message));
  });
});
