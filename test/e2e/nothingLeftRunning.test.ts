// Issue 10, case 6: nothing is left running upstream. taskgate runs as a real child process (store
// kind file) in front of the example legacy server, whose events show what really happens upstream.
// kill -9 while it holds a task: the next start closes (DELETE) the upstream session the dead
// process left, which ends the call still running on it. SIGTERM with an inline SSE call in flight:
// after shutdown.graceMs the client gets a JSON-RPC error frame (shutting_down) before its stream
// ends, held tasks end failed with a reason, upstream sessions close, and the exit code is 0.

import assert from "node:assert/strict";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import type { SessionEvent, ToolFinishedEvent, ToolStartedEvent } from "../../examples/legacy-server/state.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { finalFrame, rpcWithin, watchCall } from "../support/boundedRpc.js";
import { closeAll } from "../support/closeAll.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { assertErrorObject } from "../support/expectError.js";
import { GatewayProcesses } from "../support/gatewayProcess.js";
import { ANSWER_WITHIN_MS, UPSTREAM_LIMITS } from "../support/limits.js";
import { resultOf, TASKS_CAPS } from "../support/mcpClient.js";
import { nextEvent, timed } from "../support/waiting.js";

failIfStillRunning();

const slowEcho = (text: string) => ({ name: "slow_echo", arguments: { text, ms: 60_000 } });
const GRACE_MS = 1000;

describe("taskgate processes that end while calls run upstream", () => {
  let legacy: LegacyServer;
  let processes: GatewayProcesses;
  let config: JsonObject;
  beforeEach(async () => {
    legacy = await startLegacyServer({ port: 0 });
    processes = new GatewayProcesses();
    config = {
      upstream: { url: legacy.url, ...UPSTREAM_LIMITS },
      store: { kind: "file", path: join(await processes.directory(), "tasks.json") },
      tasks: { tools: { slow_echo: "always" } },
      shutdown: { graceMs: GRACE_MS },
    };
  });
  afterEach(() =>
    closeAll(
      () => processes?.close(),
      () => legacy?.close(),
    ),
  );

  /** Starts a slow_echo task on `url`; resolves once it runs upstream, with its task id and upstream session. */
  async function startTask(url: string, text: string): Promise<{ taskId: string; started: ToolStartedEvent }> {
    const started = nextEvent<ToolStartedEvent>(legacy.events, "tool-started", (e) => e.tool === "slow_echo", ANSWER_WITHIN_MS);
    const created = await rpcWithin(ANSWER_WITHIN_MS, url, "tools/call", slowEcho(text), { capabilities: TASKS_CAPS });
    assert.equal(resultOf(created)?.status, "working", JSON.stringify(created.message));
    return { taskId: resultOf(created).taskId as string, started: await started };
  }

  const endedUpstream = (started: ToolStartedEvent) =>
    nextEvent<ToolFinishedEvent>(
      legacy.events,
      "tool-finished",
      (e) => e.tool === "slow_echo" && e.requestId === started.requestId && e.sessionId === started.sessionId,
      ANSWER_WITHIN_MS,
    );

  test("after kill -9 of taskgate holding a task, the next start DELETEs the upstream session the dead process left, ending its call", async () => {
    const first = await processes.start(config, "first");
    const { taskId, started } = await startTask(first.url, "orphan");
    assert.ok(started.sessionId, "the upstream reports the session the call runs on");

    const exit = await first.stop("SIGKILL", 5_000);
    assert.equal(exit.signal, "SIGKILL");
    const sessionsLeft = legacy.sessionCount();
    assert.ok(sessionsLeft >= 1, "the dead process's upstream session is still open");

    const closed = nextEvent<SessionEvent>(legacy.events, "session-closed", (e) => e.sessionId === started.sessionId, ANSWER_WITHIN_MS);
    const ended = endedUpstream(started);
    const second = await processes.start(config, "second");
    await closed.catch((error: Error) => {
      throw new Error(
        `${error.message}: the restarted taskgate did not close upstream session ${started.sessionId} (upstream still has ${legacy.sessionCount()} session(s))`,
      );
    });
    const { outcome } = await ended;
    assert.ok(["closed", "cancelled"].includes(outcome), `the orphaned slow_echo ended upstream (${outcome})`);

    const task = resultOf(await rpcWithin(ANSWER_WITHIN_MS, second.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS }));
    assert.equal(task?.status, "failed", JSON.stringify(task));
  });

  test("SIGTERM: the inline SSE call gets a shutting_down error frame before its stream ends, the held task ends failed, upstream sessions close, exit code 0", async (t) => {
    const gw = await processes.start(config, "draining");
    const { taskId, started: taskStarted } = await startTask(gw.url, "held task");

    const inlineStarted = nextEvent<ToolStartedEvent>(legacy.events, "tool-started", (e) => e.tool === "slow_echo", ANSWER_WITHIN_MS);
    const inline = await watchCall(gw.url, "tools/call", slowEcho("inline"), { limitMs: ANSWER_WITHIN_MS + 10_000 }); // no tasks extension: inline
    const inlineRun = await inlineStarted;
    assert.match(inline.contentType, /text\/event-stream/, "a call still running after 250 ms streams");

    const upstreamEnds = Promise.all([endedUpstream(taskStarted), endedUpstream(inlineRun)]);
    const { value: exit, ms } = await timed(() => gw.stop("SIGTERM", ANSWER_WITHIN_MS + GRACE_MS));
    t.diagnostic(`taskgate exited ${ms} ms after SIGTERM (code ${exit.code}, signal ${exit.signal})`);
    assert.equal(exit.code, 0, `exit code after SIGTERM (signal ${exit.signal})`);

    const how = await inline.ended;
    const final = finalFrame(inline.frames);
    assert.ok(
      final?.error,
      `the inline call's stream (${how}) must end with a JSON-RPC error frame; frames: ${JSON.stringify(inline.frames)}`,
    );
    assertErrorObject(final.error, { reason: "shutting_down", message: /^taskgate is shutting down/ }, "the inline call's final frame");
    assert.equal(how, "end", "the stream was ended by taskgate after the frame, not cut");

    for (const { outcome, requestId } of await upstreamEnds) {
      assert.ok(["closed", "cancelled"].includes(outcome), `slow_echo ${requestId} ended upstream (${outcome})`);
    }

    // The held task was failed with a reason before the process went (read by the next process).
    const next = await processes.start(config, "after-sigterm");
    const task = resultOf(await rpcWithin(ANSWER_WITHIN_MS, next.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS }));
    assert.equal(task?.status, "failed", JSON.stringify(task));
    assert.match((task.error as { message: string }).message, /shut/i);
  });
});
