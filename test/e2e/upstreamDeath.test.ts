// Issue 10, case 3: taskgate notices an upstream process that dies. The upstream is the example
// legacy server as a real process with resumable streams (an event store, as server-everything
// has), which is what made taskgate wait for a resumption that never comes. It is SIGKILLed while
// a task and an inline SSE call run on it: the task must fail (upstream_lost or
// upstream_unresponsive) within seconds, not at its TTL, and the inline call must end with an
// error frame, not keep-alives.

import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import type { ToolStartedEvent } from "../../examples/legacy-server/state.js";
import { finalFrame, rpcWithin, watchCall } from "../support/boundedRpc.js";
import { closeAll } from "../support/closeAll.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { assertErrorObject } from "../support/expectError.js";
import { type FaultGateway, startFaultGateway } from "../support/inProcessGateway.js";
import { ANSWER_WITHIN_MS, UPSTREAM_LIMITS } from "../support/limits.js";
import { resultOf, TASKS_CAPS } from "../support/mcpClient.js";
import { LegacyProcess } from "../support/servers/legacyProcess.js";
import { pollTask } from "../support/tasks.js";
import { timed } from "../support/waiting.js";

failIfStillRunning();

const DEATH_REASONS = ["upstream_lost", "upstream_unresponsive"];
const DEATH_MESSAGE = /^Upstream (call lost|stopped answering)/;
const TTL_MS = 600_000;
const slowEcho = { name: "slow_echo", arguments: { text: "x", ms: 60_000 } };

function assertDeathError(error: unknown, where: string): void {
  const reason = (error as { data?: { reason?: unknown } } | undefined)?.data?.reason;
  assert.ok(
    DEATH_REASONS.includes(String(reason)),
    `${where}: data.reason should be one of ${DEATH_REASONS.join(", ")}; error was ${JSON.stringify(error)}`,
  );
  assertErrorObject(error, { reason: String(reason), message: DEATH_MESSAGE }, where);
}

describe("an upstream process SIGKILLed while calls run on it", () => {
  let legacy: LegacyProcess;
  let gw: FaultGateway;
  beforeEach(async () => {
    legacy = await LegacyProcess.start({ resumable: true });
    gw = await startFaultGateway(legacy.url, {
      upstream: { ...UPSTREAM_LIMITS },
      tasks: { ttlMs: TTL_MS, tools: { slow_echo: "always" } },
    });
  });
  afterEach(() =>
    closeAll(
      () => gw?.close(),
      () => legacy?.close(),
    ),
  );

  test("a running task fails with upstream_lost or upstream_unresponsive within seconds, long before its TTL", async (t) => {
    const started = legacy.next<ToolStartedEvent>("tool-started", (e) => e.tool === "slow_echo");
    const created = await rpcWithin(ANSWER_WITHIN_MS, gw.url, "tools/call", slowEcho, { capabilities: TASKS_CAPS });
    assert.equal(resultOf(created)?.status, "working", JSON.stringify(created.message));
    await started;

    await legacy.kill();
    const { value: task, ms } = await timed(() =>
      pollTask(gw.url, resultOf(created).taskId as string, (task) => task.status !== "working", { timeoutMs: ANSWER_WITHIN_MS }),
    );
    t.diagnostic(`task ${String(task.status)} ${ms} ms after SIGKILL`);
    assert.equal(task.status, "failed", JSON.stringify(task));
    assertDeathError(task.error, "the task's error");
    assert.match(String(task.statusMessage), DEATH_MESSAGE);
  });

  test("an inline tools/call streaming SSE ends with a JSON-RPC error frame", async (t) => {
    const started = legacy.next<ToolStartedEvent>("tool-started", (e) => e.tool === "slow_echo");
    const call = await watchCall(gw.url, "tools/call", slowEcho, { limitMs: ANSWER_WITHIN_MS + 5_000 });
    await started;
    assert.equal(call.status, 200);
    assert.match(call.contentType, /text\/event-stream/, "a call still running after 250 ms streams");

    await legacy.kill();
    const { value: ended, ms } = await timed(() => call.ended);
    t.diagnostic(`inline stream ${ended} ${ms} ms after SIGKILL`);
    assert.equal(ended, "end", `the stream must end with a final message, not be cut; frames: ${JSON.stringify(call.frames)}`);
    const final = finalFrame(call.frames);
    assert.ok(final?.error, `the final frame must be a JSON-RPC error; frames: ${JSON.stringify(call.frames)}`);
    assertDeathError(final.error, "the final SSE frame");
  });
});
