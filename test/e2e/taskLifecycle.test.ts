// E2E: the life of a task over real HTTP against the real example legacy server (speed 20):
// progress as statusMessage, input_required with its questions, tasks/update (accept, decline,
// partial, unknown keys, invalid answers), the key rules, tasks/cancel (working, input_required,
// terminal), completed-with-isError vs failed, TTL expiry, and the Mcp-Name routing header.
// Every task shape is checked against the ext-tasks v2 schemas (taskShapes.ts).
// Run: node --import tsx --test test/e2e/taskLifecycle.test.ts

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { CancelledEvent, ElicitationAnsweredEvent, ToolFinishedEvent, ToolStartedEvent } from "../../examples/legacy-server/state.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { type Stack, startStack } from "../support/stack.js";
import { assertGetTaskResult, textOf } from "../support/taskShapes.js";
import {
  assertRpcError,
  cancelTask,
  createTask,
  getTask,
  hasStatus,
  keysOf,
  TERMINAL,
  taskRpc,
  updateTask,
  waitForTask,
} from "../support/tasks.js";
import { nextEvent } from "../support/waiting.js";

const SPEED = 20;
const LONG = 60_000; // legacy ms: 3 s real at speed 20

const stacks: Stack[] = [];
async function stack(tasks: Record<string, unknown> = {}): Promise<Stack> {
  const s = await startStack({ speed: SPEED, config: { tasks: { policy: "always", ...tasks } } });
  stacks.push(s);
  return s;
}
after(async () => {
  for (const s of stacks.splice(0)) await s.close();
});

const idOf = (task: JsonObject) => task.taskId as string;
const accept = (content: JsonObject) => ({ action: "accept", content });

describe("progress, questions and answers", () => {
  let s: Stack;
  before(async () => {
    s = await stack();
  });

  test("progress shows up as statusMessage while working", async () => {
    const task = await createTask(s.url, "build_report", { month: "2025-01" });
    const working = await waitForTask(s.url, idOf(task), (t) => /Collecting data \(\d\/8\)/.test(String(t.statusMessage)));
    assert.equal(working.status, "working");
    await cancelTask(s.url, idOf(task));
  });

  test("build_report: input_required with the question under 'charts'; accept ⇒ ack, key gone at once, completes with charts", async () => {
    const task = await createTask(s.url, "build_report", { month: "2025-01" });
    const waiting = await waitForTask(s.url, idOf(task), hasStatus("input_required"));
    assert.deepEqual(keysOf(waiting), ["charts"]);
    assert.deepEqual(waiting.inputRequests, {
      charts: {
        method: "elicitation/create",
        params: {
          mode: "form",
          message: "Include charts?",
          requestedSchema: {
            type: "object",
            properties: { charts: { type: "boolean", title: "Include charts", description: "Add charts to the report" } },
            required: ["charts"],
          },
        },
      },
    });
    // Repeated on every poll until answered.
    assert.deepEqual((await getTask(s.url, idOf(task))).inputRequests, waiting.inputRequests);

    const answered = nextEvent<ElicitationAnsweredEvent>(s.legacy.events, "elicitation-answered", (e) => e.tool === "build_report");
    await updateTask(s.url, idOf(task), { charts: accept({ charts: true }) });
    const next = await getTask(s.url, idOf(task));
    assert.ok(!keysOf(next).includes("charts"), "the very next tasks/get no longer lists 'charts'");
    assert.notEqual(next.status, "input_required");
    assert.deepEqual((await answered).content, { charts: true });

    const done = await waitForTask(s.url, idOf(task), TERMINAL);
    assert.equal(done.status, "completed");
    const result = done.result as JsonObject;
    assert.equal(result.resultType, "complete");
    assert.match(textOf(result), /^Report for 2025-01: .*charts included\.$/);
    assert.ok(!("isError" in result) || result.isError === false);
  });

  test("decline reaches the upstream, and the result says so", async () => {
    const task = await createTask(s.url, "build_report", { month: "2025-02" });
    await waitForTask(s.url, idOf(task), hasStatus("input_required"));
    const answered = nextEvent<ElicitationAnsweredEvent>(s.legacy.events, "elicitation-answered", (e) => e.tool === "build_report");
    await updateTask(s.url, idOf(task), { charts: { action: "decline" } });
    const event = await answered;
    assert.equal(event.action, "decline");
    const done = await waitForTask(s.url, idOf(task), TERMINAL);
    assert.equal(done.status, "completed");
    assert.match(textOf(done.result), /^Report for 2025-02: .*without charts \(the user declined; default: no charts\)\.$/);
  });

  test("two_questions: a partial answer leaves only the other key; the second answer completes it", async () => {
    const task = await createTask(s.url, "two_questions");
    const both = await waitForTask(s.url, idOf(task), (t) => keysOf(t).length === 2);
    assert.equal(both.status, "input_required");
    assert.deepEqual(keysOf(both), ["colour", "size"]);

    await updateTask(s.url, idOf(task), { colour: accept({ colour: "teal" }) });
    const partial = await getTask(s.url, idOf(task));
    assert.equal(partial.status, "input_required");
    assert.deepEqual(keysOf(partial), ["size"]);

    await updateTask(s.url, idOf(task), { size: accept({ size: "M" }) });
    const done = await waitForTask(s.url, idOf(task), TERMINAL);
    assert.equal(done.status, "completed");
    assert.equal(textOf(done.result), "colour=teal, size=M");
  });

  test("unknown keys are acknowledged and change nothing", async () => {
    const task = await createTask(s.url, "two_questions");
    const before = await waitForTask(s.url, idOf(task), (t) => keysOf(t).length === 2);
    await updateTask(s.url, idOf(task), { "unknown-key": { ignored: true } });
    assert.deepEqual(await getTask(s.url, idOf(task)), before);
    // An unknown key next to a real one: the real one is taken, the unknown one ignored.
    await updateTask(s.url, idOf(task), { "unknown-key": { ignored: true }, colour: accept({ colour: "red" }) });
    const after = await getTask(s.url, idOf(task));
    assert.deepEqual(keysOf(after), ["size"]);
    // A key that was already answered is not outstanding any more: ignored too.
    await updateTask(s.url, idOf(task), { colour: accept({ colour: "blue" }) });
    assert.deepEqual(keysOf(await getTask(s.url, idOf(task))), ["size"]);
    await updateTask(s.url, idOf(task), { size: accept({ size: "S" }) });
    const done = await waitForTask(s.url, idOf(task), TERMINAL);
    assert.equal(textOf(done.result), "colour=red, size=S");
  });

  test("an answer that does not fit the schema ⇒ -32602 and the question stays open", async () => {
    const task = await createTask(s.url, "build_report", { month: "2025-03" });
    const before = await waitForTask(s.url, idOf(task), hasStatus("input_required"));
    const reply = await taskRpc(s.url, "tasks/update", { taskId: idOf(task), inputResponses: { charts: accept({ charts: "yes" }) } });
    const error = assertRpcError(reply, -32602);
    assert.match(error.message, /charts/);
    const still = await getTask(s.url, idOf(task));
    assert.equal(still.status, "input_required");
    assert.deepEqual(still.inputRequests, before.inputRequests);
    // A corrected answer is taken.
    await updateTask(s.url, idOf(task), { charts: accept({ charts: false }) });
    const done = await waitForTask(s.url, idOf(task), TERMINAL);
    assert.match(textOf(done.result), /without charts\.$/);
  });

  test("tasks/update without inputResponses ⇒ -32602", async () => {
    const task = await createTask(s.url, "greet", { name: "x" });
    assertRpcError(await taskRpc(s.url, "tasks/update", { taskId: idOf(task) }), -32602);
  });
});

describe("input keys", () => {
  test("two_rounds yields 'first' then 'last'", async () => {
    const s = await stack();
    const task = await createTask(s.url, "two_rounds");
    const first = await waitForTask(s.url, idOf(task), hasStatus("input_required"));
    assert.deepEqual(keysOf(first), ["first"]);
    await updateTask(s.url, idOf(task), { first: accept({ first: "Ada" }) });
    const second = await waitForTask(s.url, idOf(task), (t) => keysOf(t).length > 0);
    assert.deepEqual(keysOf(second), ["last"]);
    await updateTask(s.url, idOf(task), { last: accept({ last: "Lovelace" }) });
    const done = await waitForTask(s.url, idOf(task), TERMINAL);
    assert.equal(textOf(done.result), "Hello, Ada Lovelace!");
  });

  test("a configured key wins and is never reused: 'name' then 'name_2'", async () => {
    const s = await stack({ inputKeys: { two_rounds: "name", build_report: "include" } });
    const task = await createTask(s.url, "two_rounds");
    const first = await waitForTask(s.url, idOf(task), hasStatus("input_required"));
    assert.deepEqual(keysOf(first), ["name"]);
    await updateTask(s.url, idOf(task), { name: accept({ first: "Grace" }) });
    const second = await waitForTask(s.url, idOf(task), (t) => keysOf(t).length > 0);
    assert.deepEqual(keysOf(second), ["name_2"], "the answered key 'name' is not reused");
    assert.equal((second.inputRequests as { name_2: { params: { message: string } } }).name_2.params.message, "Last name?");
    // A stale answer for the old key is ignored, not delivered to the new question.
    await updateTask(s.url, idOf(task), { name: accept({ last: "Stale" }) });
    assert.deepEqual(keysOf(await getTask(s.url, idOf(task))), ["name_2"]);
    await updateTask(s.url, idOf(task), { name_2: accept({ last: "Hopper" }) });
    const done = await waitForTask(s.url, idOf(task), TERMINAL);
    assert.equal(textOf(done.result), "Hello, Grace Hopper!");

    const report = await createTask(s.url, "build_report", { month: "2025-04" });
    const asked = await waitForTask(s.url, idOf(report), hasStatus("input_required"));
    assert.deepEqual(keysOf(asked), ["include"]);
    await cancelTask(s.url, idOf(report));
  });
});

describe("cancel", () => {
  let s: Stack;
  before(async () => {
    s = await stack();
  });

  test("while working (slow_echo): ack, cancelled within a few seconds, the upstream got notifications/cancelled", async () => {
    const started = nextEvent<ToolStartedEvent>(s.legacy.events, "tool-started", (e) => e.tool === "slow_echo");
    const task = await createTask(s.url, "slow_echo", { text: "never", ms: LONG });
    await started; // the upstream really runs it (cancelling before that would send nothing upstream)
    assert.equal((await getTask(s.url, idOf(task))).status, "working");
    const cancelled = nextEvent<CancelledEvent>(s.legacy.events, "cancelled", (e) => e.tool === "slow_echo");
    const cancelledAt = Date.now();
    await cancelTask(s.url, idOf(task));
    const done = await waitForTask(s.url, idOf(task), TERMINAL, { timeoutMs: 3000 });
    assert.equal(done.status, "cancelled");
    assert.ok(Date.now() - cancelledAt < 3000);
    const event = await cancelled;
    assert.equal(event.tool, "slow_echo");
    // Cancel of a cancelled task: the same empty ack, nothing changes.
    await cancelTask(s.url, idOf(task));
    assert.deepEqual(await getTask(s.url, idOf(task)), done);
  });

  test("while input_required (build_report): ack, cancelled, the upstream got notifications/cancelled", async () => {
    const task = await createTask(s.url, "build_report", { month: "2025-05" });
    await waitForTask(s.url, idOf(task), hasStatus("input_required"));
    const cancelled = nextEvent<CancelledEvent>(s.legacy.events, "cancelled", (e) => e.tool === "build_report");
    await cancelTask(s.url, idOf(task));
    const done = await waitForTask(s.url, idOf(task), TERMINAL, { timeoutMs: 3000 });
    assert.equal(done.status, "cancelled");
    assert.ok(!("inputRequests" in done));
    assert.equal((await cancelled).tool, "build_report");
    // Answering a cancelled task's old question: acknowledged, ignored.
    await updateTask(s.url, idOf(task), { charts: accept({ charts: true }) });
    assert.equal((await getTask(s.url, idOf(task))).status, "cancelled");
  });

  test("cancel of a completed task ⇒ the same empty ack, still completed", async () => {
    const task = await createTask(s.url, "greet", { name: "Done" });
    const done = await waitForTask(s.url, idOf(task), TERMINAL);
    assert.equal(done.status, "completed");
    let cancelledUpstream = false;
    const listener = () => (cancelledUpstream = true);
    s.legacy.events.on("cancelled", listener);
    await cancelTask(s.url, idOf(task));
    s.legacy.events.off("cancelled", listener);
    assert.deepEqual(await getTask(s.url, idOf(task)), done);
    assert.equal(cancelledUpstream, false);
  });
});

describe("outcomes", () => {
  let s: Stack;
  before(async () => {
    s = await stack();
  });

  test("fail_tool ⇒ completed with result.isError true (a tool error is a result)", async () => {
    const finished = nextEvent<ToolFinishedEvent>(s.legacy.events, "tool-finished", (e) => e.tool === "fail_tool");
    const task = await createTask(s.url, "fail_tool");
    const done = await waitForTask(s.url, idOf(task), TERMINAL);
    assert.equal(done.status, "completed");
    const result = done.result as JsonObject;
    assert.equal(result.isError, true);
    assert.equal(result.resultType, "complete");
    assert.equal(textOf(result), "The tool failed on purpose");
    assert.equal((await finished).outcome, "tool-error");
  });

  test("broken_tool ⇒ failed with the JSON-RPC error inlined", async () => {
    const task = await createTask(s.url, "broken_tool");
    const done = await waitForTask(s.url, idOf(task), TERMINAL);
    assert.equal(done.status, "failed");
    assert.deepEqual(done.error, { code: -32603, message: "broken_tool always fails" });
    assert.equal(typeof done.statusMessage, "string");
    assert.match(String(done.statusMessage), /broken_tool always fails/);
  });
});

describe("TTL", () => {
  test("a task past its ttlMs is gone: tasks/get ⇒ -32602 like an unknown id", async () => {
    const s = await stack({ ttlMs: 300 });
    const task = await createTask(s.url, "greet", { name: "Brief" });
    assert.equal(task.ttlMs, 300);
    const done = await waitForTask(s.url, idOf(task), TERMINAL);
    assert.equal(done.status, "completed");
    assert.equal(done.ttlMs, 300);
    const created = Date.parse(task.createdAt as string);
    // Time passing is what is tested: the ttl runs out.
    await new Promise((r) => setTimeout(r, Math.max(0, created + 400 - Date.now())));
    const expired = assertRpcError(await taskRpc(s.url, "tasks/get", { taskId: idOf(task) }), -32602);
    const unknown = assertRpcError(await taskRpc(s.url, "tasks/get", { taskId: randomBytes(20).toString("base64url") }), -32602);
    assert.equal(expired.message, unknown.message);
    assertRpcError(await taskRpc(s.url, "tasks/cancel", { taskId: idOf(task) }), -32602);
    assertRpcError(await taskRpc(s.url, "tasks/update", { taskId: idOf(task), inputResponses: {} }), -32602);
  });
});

describe("routing header Mcp-Name", () => {
  let s: Stack;
  let taskId: string;
  before(async () => {
    s = await stack();
    taskId = idOf(await createTask(s.url, "greet", { name: "Header" }));
  });

  test("Mcp-Name different from params.taskId ⇒ -32020, HTTP 400", async () => {
    for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
      const params = method === "tasks/update" ? { taskId, inputResponses: {} } : { taskId };
      const reply = await taskRpc(s.url, method, params, "alice", { "Mcp-Name": `${taskId}x` });
      assertRpcError(reply, -32020, 400);
    }
    assert.equal((await getTask(s.url, taskId)).taskId, taskId, "the mismatch changed nothing");
  });

  test("absent Mcp-Name is accepted on tasks/*", async () => {
    const reply = await taskRpc(s.url, "tasks/get", { taskId }, "alice", { "Mcp-Name": undefined });
    assert.equal(reply.status, 200);
    assertGetTaskResult(reply.message.result);
    const cancel = await taskRpc(s.url, "tasks/cancel", { taskId }, "alice", { "Mcp-Name": undefined });
    assert.deepEqual(cancel.message.result, { resultType: "complete" });
  });
});
