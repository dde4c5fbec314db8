// Issue 9, problem 4: 2025-11-25 task tools. When the upstream declares tasks and a tool says
// `execution.taskSupport: "required"`, taskgate calls it task-augmented and follows the upstream
// task (its input requests, its result, cancel) behind the 2026-07-28 task the client sees.
// Against server-everything's simulate-research-query (four 1-second stages; with
// `ambiguous: true` and elicitation declared it asks which interpretation is meant, delivered only
// on a tasks/result stream) and the SDK example simpleTaskInteractive (task-only tools whose
// question goes out on the GET stream once tasks/result is open). A counting proxy of ours
// between taskgate and server-everything shows what the upstream received.
// Run: node --import tsx --test test/e2e/realServers/upstreamTaskTools.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Gateway } from "../../../src/gateway.js";
import type { JsonObject } from "../../../src/protocol/wire.js";
import { inFrontOf, startGatewayInFront } from "../../support/gatewayInFront.js";
import { TASKS_CAPS } from "../../support/mcpClient.js";
import {
  accept,
  callTool,
  expectComplete,
  expectError,
  expectInputRequired,
  expectTask,
  FORMS,
  TASKS_AND_FORMS,
  textOf,
} from "../../support/realServerCalls.js";
import { type CountingProxy, startCountingProxy } from "../../support/servers/countingProxy.js";
import type { ServerProcess } from "../../support/servers/serverProcess.js";
import { startThirdPartyServer } from "../../support/servers/thirdParty.js";
import { cancelTask, hasStatus, keysOf, TERMINAL, updateTask, waitForTask } from "../../support/tasks.js";
import { eventually } from "../../support/waiting.js";

const TASK_WAIT_MS = 20_000;

/** Starts `tool` as a task; the CreateTaskResult is checked. */
async function startTask(url: string, tool: string, args: JsonObject, who: { token: string; capabilities: JsonObject }): Promise<string> {
  return expectTask(await callTool(url, tool, args, who)).taskId as string;
}

/** The task's state once it asks or ends. */
const ASKS_OR_ENDS = hasStatus("input_required", "completed", "failed", "cancelled");

/** Waits until `until` (a terminal status by default); a task that does not get there is cancelled before the error. */
async function finish(url: string, taskId: string, token: string, until = TERMINAL): Promise<JsonObject> {
  try {
    return await waitForTask(url, taskId, until, { token, timeoutMs: TASK_WAIT_MS });
  } catch (error) {
    await cancelTask(url, taskId, token).catch(() => undefined);
    throw error;
  }
}

describe("server-everything: simulate-research-query (taskSupport required)", () => {
  let everything: ServerProcess;
  let proxy: CountingProxy;
  let gateway: Gateway;

  before(async () => {
    everything = await startThirdPartyServer("everything");
    proxy = await startCountingProxy(everything.url);
    gateway = await startGatewayInFront(proxy.url);
  });
  after(async () => {
    await gateway?.close();
    await proxy?.close();
    await everything?.stop();
  });

  const upstreamCallsOf = (tool: string) => proxy.forwarded.filter((r) => r.method === "tools/call" && r.params?.name === tool);

  test("as a task it is called task-augmented upstream and completes with the research report", async () => {
    const who = { token: "alice", capabilities: TASKS_CAPS };
    const taskId = await startTask(gateway.url, "simulate-research-query", { topic: "rust" }, who);
    // The upstream task's statusMessage (one per stage) is the task's while it works.
    const STAGE = /^(Gathering sources|Analyzing content|Synthesizing findings|Generating report)\.\.\.$/;
    const staged = await waitForTask(gateway.url, taskId, (t) => STAGE.test(String(t.statusMessage)) || TERMINAL(t), {
      token: who.token,
      timeoutMs: TASK_WAIT_MS,
    });
    assert.match(String(staged.statusMessage), STAGE, JSON.stringify(staged));
    const done = await finish(gateway.url, taskId, who.token);
    assert.equal(done.status, "completed", JSON.stringify(done));
    const result = done.result as JsonObject;
    assert.notEqual(result.isError, true, `the upstream refused the call: ${textOf(result)}`);
    assert.match(textOf(result), /^# Research Report: rust/);
    const forwarded = upstreamCallsOf("simulate-research-query").filter((r) => (r.params?.arguments as JsonObject)?.topic === "rust");
    assert.equal(forwarded.length, 1, "one upstream tools/call");
    assert.ok(forwarded[0]!.params?.task, `the upstream tools/call carried a task param: ${JSON.stringify(forwarded[0]!.params)}`);
  });

  test("ambiguous with elicitation declared: input_required asks the interpretation, tasks/update answers it, the report names it", async () => {
    const who = { token: "bob", capabilities: TASKS_AND_FORMS };
    const taskId = await startTask(gateway.url, "simulate-research-query", { topic: "python", ambiguous: true }, who);
    const asking = await finish(gateway.url, taskId, who.token, ASKS_OR_ENDS);
    assert.equal(asking.status, "input_required", `expected the clarification question, got ${JSON.stringify(asking)}`);
    assert.deepEqual(keysOf(asking), ["interpretation"]);
    const question = (asking.inputRequests as Record<string, JsonObject>).interpretation!;
    assert.equal(question.method, "elicitation/create");
    const schema = (question.params as JsonObject).requestedSchema as { properties: { interpretation: { oneOf: { const: string }[] } } };
    assert.deepEqual(
      schema.properties.interpretation.oneOf.map((option) => option.const),
      ["programming", "snake", "comedy"],
    );
    await updateTask(gateway.url, taskId, { interpretation: accept({ interpretation: "snake" }) }, who.token);
    const done = await finish(gateway.url, taskId, who.token);
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.match(textOf(done.result), /^# Research Report: python \(snake\)/);
    assert.match(textOf(done.result), /\*\*Clarification\*\*: snake/);
  });

  test("tasks/cancel cancels the upstream task (the upstream receives tasks/cancel) and the task ends cancelled", async () => {
    const who = { token: "carol", capabilities: TASKS_CAPS };
    const taskId = await startTask(gateway.url, "simulate-research-query", { topic: "cancelled topic" }, who);
    await eventually(
      () => upstreamCallsOf("simulate-research-query").some((r) => (r.params?.arguments as JsonObject)?.topic === "cancelled topic"),
      "the upstream tools/call",
      5_000,
    );
    const cancelsBefore = proxy.count("tasks/cancel");
    await cancelTask(gateway.url, taskId, who.token);
    assert.equal((await waitForTask(gateway.url, taskId, TERMINAL, { token: who.token })).status, "cancelled");
    await eventually(() => proxy.count("tasks/cancel") > cancelsBefore, "an upstream tasks/cancel", 5_000);
  });

  test("a client that does not declare the tasks extension gets -32021 for the task-only tool", async () => {
    const error = expectError(
      await callTool(gateway.url, "simulate-research-query", { topic: "x" }, { token: "alice", capabilities: {} }),
      -32021,
    );
    assert.match(error.message, /task/i);
    assert.equal(
      upstreamCallsOf("simulate-research-query").some((r) => (r.params?.arguments as JsonObject)?.topic === "x"),
      false,
      "nothing reached the upstream",
    );
  });

  test("configured inline (policy never): a client without tasks gets the report inline, taskgate following the upstream task", async () => {
    const inline = await startGatewayInFront(proxy.url, { tasks: { tools: { "simulate-research-query": "never" } } });
    try {
      const done = expectComplete(
        await callTool(inline.url, "simulate-research-query", { topic: "inline topic" }, { token: "dave", capabilities: {} }),
      );
      assert.notEqual(done.isError, true, textOf(done));
      assert.match(textOf(done), /^# Research Report: inline topic/);
      const forwarded = upstreamCallsOf("simulate-research-query").filter(
        (r) => (r.params?.arguments as JsonObject)?.topic === "inline topic",
      );
      assert.equal(forwarded.length, 1, "one upstream tools/call");
      assert.ok(forwarded[0]!.params?.task, "called task-augmented upstream");
    } finally {
      await inline.close();
    }
  });
});

describe("simpleTaskInteractive (SDK 1.x): confirm_delete asks on the GET stream while tasks/result is open", () => {
  const front = inFrontOf("simpleTaskInteractive");

  test("as a task: input_required asks to confirm, tasks/update answers, completed with the upstream's result", async () => {
    const who = { token: "alice", capabilities: TASKS_AND_FORMS };
    const taskId = await startTask(front.gateway.url, "confirm_delete", { filename: "notes.txt" }, who);
    const asking = await finish(front.gateway.url, taskId, who.token, ASKS_OR_ENDS);
    assert.equal(asking.status, "input_required", `expected the confirmation question, got ${JSON.stringify(asking)}`);
    assert.deepEqual(keysOf(asking), ["confirm"]);
    const question = (asking.inputRequests as Record<string, JsonObject>).confirm!;
    assert.equal((question.params as JsonObject).message, "Are you sure you want to delete 'notes.txt'?");
    await updateTask(front.gateway.url, taskId, { confirm: accept({ confirm: true }) }, who.token);
    const done = await finish(front.gateway.url, taskId, who.token);
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.equal(textOf(done.result), "Deleted 'notes.txt'");
  });

  test("configured inline (policy never): the question is an MRTR round, the retry answers it and gets the upstream's result", async () => {
    const inline = await startGatewayInFront(front.server.url, { tasks: { tools: { confirm_delete: "never" } } });
    try {
      const who = { token: "bob", capabilities: FORMS };
      const round = expectInputRequired(await callTool(inline.url, "confirm_delete", { filename: "old.log" }, who));
      assert.equal((round.inputRequests[round.key]!.params as JsonObject).message, "Are you sure you want to delete 'old.log'?");
      const done = expectComplete(
        await callTool(inline.url, "confirm_delete", { filename: "old.log" }, who, {
          params: { requestState: round.requestState, inputResponses: { [round.key]: accept({ confirm: true }) } },
        }),
      );
      assert.equal(textOf(done), "Deleted 'old.log'");
    } finally {
      await inline.close();
    }
  });

  test("the upstream restarts while its task waits for an answer: the task fails upstream_lost and is not run again", async () => {
    const who = { token: "carol", capabilities: TASKS_AND_FORMS };
    const taskId = await startTask(front.gateway.url, "confirm_delete", { filename: "lost.txt" }, who);
    try {
      const asking = await waitForTask(front.gateway.url, taskId, ASKS_OR_ENDS, { token: who.token, timeoutMs: TASK_WAIT_MS });
      assert.equal(asking.status, "input_required", JSON.stringify(asking));
      await front.server.restart();
      const done = await waitForTask(front.gateway.url, taskId, TERMINAL, { token: who.token, timeoutMs: TASK_WAIT_MS });
      assert.equal(done.status, "failed", JSON.stringify(done));
      const error = done.error as { code: number; message: string; data?: JsonObject };
      assert.equal(error.code, -32603);
      assert.match(error.message, /^Upstream call lost: /);
      assert.equal(error.data?.reason, "upstream_lost");
    } catch (error) {
      await cancelTask(front.gateway.url, taskId, who.token).catch(() => undefined);
      throw error;
    }
  });
});
