// Issue 9, problem 4 (the error paths): a 2025-11-25 upstream task that misbehaves. A fake server
// (support/servers/misbehavingTaskServer.ts: faults no real server shows on demand) whose task ends while
// tasks/result never answers, whose tasks/get forgets the task, whose tasks/cancel refuses, or
// which answers a task-augmented tools/call with a plain result, or refuses connections for a
// while; and an optional task tool, called
// task-augmented only for a request that declared tasks. Limits are small (support/limits.ts).
// Run: node --import tsx --test test/e2e/upstreamTaskFaults.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { JsonObject } from "../../src/protocol/wire.js";
import { closeAll } from "../support/closeAll.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { assertErrorObject } from "../support/expectError.js";
import { type FaultGateway, startFaultGateway } from "../support/inProcessGateway.js";
import { ANSWER_WITHIN_MS, UPSTREAM_LIMITS } from "../support/limits.js";
import { resultOf, TASKS_CAPS } from "../support/mcpClient.js";
import { type MisbehavingTaskServer, startMisbehavingTaskServer } from "../support/servers/misbehavingTaskServer.js";
import { textOf } from "../support/taskShapes.js";
import { callTool, cancelTask, createTask, TERMINAL, waitForTask } from "../support/tasks.js";
import { eventually } from "../support/waiting.js";

failIfStillRunning();

describe("a 2025-11-25 upstream whose tasks misbehave (fake server)", () => {
  let upstream: MisbehavingTaskServer;
  let gw: FaultGateway;
  const who = { token: "alice", capabilities: TASKS_CAPS };

  before(async () => {
    upstream = await startMisbehavingTaskServer();
    gw = await startFaultGateway(upstream.url, { upstream: { ...UPSTREAM_LIMITS } });
  });
  after(() =>
    closeAll(
      () => gw?.close(),
      () => upstream?.close(),
    ),
  );

  const count = (method: string) => upstream.received.filter((m) => m === method).length;
  /** Creates a task of `tool` and waits until taskgate follows its upstream task (a new tasks/result). */
  const followed = async (tool: string) => {
    const results = count("tasks/result");
    const { taskId } = await createTask(gw.url, tool, {}, who);
    await eventually(() => count("tasks/result") > results, "the upstream task followed", ANSWER_WITHIN_MS);
    return taskId as string;
  };

  const finished = async (tool: string) => {
    const { taskId } = await createTask(gw.url, tool, {}, who);
    return waitForTask(gw.url, taskId as string, TERMINAL, { timeoutMs: ANSWER_WITHIN_MS });
  };

  test("the upstream task ended but tasks/result never answers: failed, upstream_timeout naming upstream.requestTimeoutMs", async () => {
    const done = await finished("stuck_result");
    assert.equal(done.status, "failed", JSON.stringify(done));
    assertErrorObject(
      done.error,
      {
        reason: "upstream_timeout",
        message:
          /^Upstream timed out: no answer to tasks\/result within 1500 ms of its task task-\d+ ending completed \(upstream\.requestTimeoutMs\)$/,
      },
      "stuck_result",
    );
  });

  test("tasks/get says the upstream no longer knows the task: failed, upstream_lost", async () => {
    const done = await finished("forgotten_task");
    assert.equal(done.status, "failed", JSON.stringify(done));
    assertErrorObject(
      done.error,
      {
        reason: "upstream_lost",
        message: /^Upstream call lost: the upstream no longer knows its task task-\d+ \(tasks\/get: Task not found: task-\d+\)$/,
      },
      "forgotten_task",
    );
  });

  test("tasks/cancel answered -32602 (the upstream task had just ended): cancelled, nothing logged as a failure", async () => {
    const taskId = await followed("ended_on_cancel");
    await cancelTask(gw.url, taskId);
    assert.equal((await waitForTask(gw.url, taskId, TERMINAL)).status, "cancelled");
    const ended = () => gw.logs.mentioning("upstream task needed no cancel").filter((line) => line.taskId === taskId);
    await eventually(() => ended().length > 0, "the -32602 answer to tasks/cancel", ANSWER_WITHIN_MS);
    assert.deepEqual(
      gw.logs.mentioning("upstream.task.cancel_failed").filter((line) => line.taskId === taskId),
      [],
    );
  });

  test("tasks/cancel refused upstream (-32603): the task is cancelled here all the same, and the refusal is logged (warn)", async () => {
    const taskId = await followed("refused_cancel");
    await cancelTask(gw.url, taskId);
    assert.equal((await waitForTask(gw.url, taskId, TERMINAL)).status, "cancelled");
    await eventually(() => gw.logs.mentioning("upstream.task.cancel_failed").length > 0, "the refusal logged", ANSWER_WITHIN_MS);
    const [line] = gw.logs.mentioning("upstream.task.cancel_failed");
    assert.equal(line!.level, 40);
    assert.match(String(line!.err), /the task store is down/);
  });

  test("tasks/get cannot connect for less than upstream.requestTimeoutMs: the task goes on; for longer: failed, upstream_unreachable", async () => {
    const taskId = await followed("blip");
    const polls = count("tasks/get");
    await upstream.outage(700);
    await eventually(() => count("tasks/get") > polls, "tasks/get answered again after the outage", ANSWER_WITHIN_MS);
    assert.equal((await waitForTask(gw.url, taskId, () => true)).status, "working");
    await upstream.outage(2_500);
    const done = await waitForTask(gw.url, taskId, TERMINAL, { timeoutMs: ANSWER_WITHIN_MS });
    assert.equal(done.status, "failed", JSON.stringify(done));
    assertErrorObject(
      done.error,
      { reason: "upstream_unreachable", message: /^Upstream unreachable at http:\/\/127\.0\.0\.1:\d+\/mcp: connect ECONNREFUSED/ },
      "blip",
    );
  });

  test("an optional task tool: task-augmented upstream for a request that declared tasks, a plain call for one that did not", async () => {
    // Policy auto (from "optional"): the upstream task is done at once, so the answer is inline.
    const viaTask = await callTool(gw.url, "optional_echo", {}, who);
    assert.deepEqual(
      resultOf(viaTask),
      { content: [{ type: "text", text: "via task" }], resultType: "complete" },
      "the related-task _meta is stripped",
    );
    const plain = await callTool(gw.url, "optional_echo", {}, { token: "alice", capabilities: {} });
    assert.equal(textOf(resultOf(plain)), "plain", JSON.stringify(plain.message));
  });

  test("a task-augmented tools/call answered with a plain result: that result completes the task", async () => {
    const done = await finished("runs_directly");
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.equal(textOf(done.result as JsonObject), "ran directly");
  });
});
