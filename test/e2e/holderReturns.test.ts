// A holder that only looked gone: taskgate A (a real child process on Redis) holds a task and is
// frozen (SIGSTOP). B fails the task as its holder is gone — or, asked to cancel it, ends it
// cancelled (an acknowledged cancel never ends `failed`). When A runs again it still has the
// upstream call; it must let go of it (stop it upstream) rather than keep a call running, or
// waiting for an answer nobody can send, for ever. Found by the chaos run (instances ended with held
// tasks and build_report calls still open upstream; acknowledged cancels ended `failed`).

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { LegacyServer } from "../../examples/legacy-server/server.js";
import type { ToolFinishedEvent, ToolStartedEvent } from "../../examples/legacy-server/state.js";
import { rpcWithin } from "../support/boundedRpc.js";
import { type ChildCluster, startChildCluster } from "../support/childCluster.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import type { GatewayProcess, GatewayProcesses } from "../support/gatewayProcess.js";
import { ANSWER_WITHIN_MS } from "../support/limits.js";
import { resultOf, TASKS_CAPS } from "../support/mcpClient.js";
import { needsRedis } from "../support/redisServer.js";
import { health } from "../support/stack.js";
import { pollTask } from "../support/tasks.js";
import { nextEvent } from "../support/waiting.js";

failIfStillRunning();

/** Longer than the holder link's 3 s: a holder frozen for one command's wait still holds its lease. */
const LONG_LEASE_MS = 10_000;
const SHORT_LEASE_MS = 1_000;
let cluster: ChildCluster;
let legacy: LegacyServer;
let processes: GatewayProcesses;
let config: ChildCluster["config"];
let startTask: ChildCluster["startTask"];

before(async () => {
  cluster = await startChildCluster();
  ({ legacy, processes, config, startTask } = cluster);
});
after(() => cluster?.close());

/** The upstream call's end, or an error saying the frozen holder still runs it (with its last log lines). */
const callEnds = (call: ToolStartedEvent, holder: GatewayProcess, ms: number) =>
  nextEvent<ToolFinishedEvent>(
    legacy.events,
    "tool-finished",
    (e) => e.requestId === call.requestId && e.sessionId === call.sessionId,
    ms,
  ).catch((error: Error) => {
    const last = holder.lines.slice(-8).map((line) => JSON.stringify(line));
    throw new Error(`${error.message}: A still runs the call of the task B ended; A's last lines:\n${last.join("\n")}`);
  });

test(
  "a cancel acknowledged while the holder does not answer ends the task cancelled, and the holder stops the call when it runs again",
  needsRedis,
  async () => {
    // Frozen for one command's wait (3 s), well within its lease: nobody takes it for dead.
    const a = await processes.start(config(LONG_LEASE_MS), "a2");
    const b = await processes.start(config(LONG_LEASE_MS), "b2");
    const { taskId, call } = await startTask(a.url);
    const ended = callEnds(call, a, LONG_LEASE_MS + ANSWER_WITHIN_MS);
    a.child.kill("SIGSTOP");
    try {
      const ack = await rpcWithin(ANSWER_WITHIN_MS, b.url, "tasks/cancel", { taskId }, { capabilities: TASKS_CAPS });
      assert.deepEqual(resultOf(ack), { resultType: "complete" });
      const task = resultOf(await rpcWithin(ANSWER_WITHIN_MS, b.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS }));
      assert.equal(task.status, "cancelled", JSON.stringify(task));
    } finally {
      a.child.kill("SIGCONT");
    }
    assert.equal((await ended).outcome, "cancelled", "A stopped the call upstream");
    assert.equal((await health(a.url)).heldTasks, 0, "A holds nothing any more");
  },
);

test(
  "a holder frozen past its lease, whose task another instance failed, stops the upstream call when it runs again",
  needsRedis,
  async () => {
    const a = await processes.start(config(SHORT_LEASE_MS), "a");
    const b = await processes.start(config(SHORT_LEASE_MS), "b");
    const { taskId, call } = await startTask(a.url);
    const ended = callEnds(call, a, ANSWER_WITHIN_MS * 2);
    a.child.kill("SIGSTOP");
    try {
      const failed = await pollTask(b.url, taskId, (t) => t.status === "failed", { timeoutMs: ANSWER_WITHIN_MS });
      assert.match(JSON.stringify(failed.error), /instance holding this task is gone/);
    } finally {
      a.child.kill("SIGCONT");
    }
    // Stopped by A when it runs again ("cancelled"), or already by B, which closes the upstream sessions of an instance whose lease is gone ("closed").
    assert.ok(["cancelled", "closed"].includes((await ended).outcome), "the call ended upstream");
    assert.equal((await health(a.url)).heldTasks, 0, "A holds nothing any more");
    assert.equal(
      resultOf(await rpcWithin(ANSWER_WITHIN_MS, a.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS })).status,
      "failed",
    );
  },
);
