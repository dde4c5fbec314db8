// E2E: how tools/call is served per task policy (never | always | auto | required) and per
// whether THIS request declared io.modelcontextprotocol/tasks. Real HTTP, real example legacy
// server (speed 20), every task shape checked against the ext-tasks v2 schemas.
// Run: node --import tsx --test test/e2e/taskPolicy.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { ToolStartedEvent } from "../../examples/legacy-server/state.js";
import { TASKS_EXTENSION } from "../../src/protocol/wire.js";
import { resultOf, TASKS_CAPS } from "../support/mcpClient.js";
import { type Stack, startStack } from "../support/stack.js";
import { assertInlineToolResult, textOf } from "../support/taskShapes.js";
import {
  assertRpcError,
  callTool,
  cancelTask,
  createTask,
  getTask,
  hasStatus,
  TASKS_AND_FORMS,
  taskRpc,
  waitForTask,
} from "../support/tasks.js";
import { nextEvent } from "../support/waiting.js";

const SPEED = 20;
/** autoAfterMs of the "auto" stack (real milliseconds). */
const AUTO_AFTER_MS = 300;
/** slow_echo ms that outlasts every window here (legacy ms; / SPEED in real time = 3 s). */
const LONG = 60_000;

const stacks: Stack[] = [];
async function stack(tasks: Record<string, unknown>): Promise<Stack> {
  const s = await startStack({ speed: SPEED, config: { tasks } });
  stacks.push(s);
  return s;
}

after(async () => {
  for (const s of stacks.splice(0)) await s.close();
});

describe("policy 'never'", () => {
  let s: Stack;
  before(async () => {
    s = await stack({ policy: "never", autoAfterMs: 50 });
  });

  test("a declaring client gets the result inline, even for a call slower than autoAfterMs", async () => {
    const started = Date.now();
    const reply = await callTool(s.url, "slow_echo", { text: "inline please", ms: 4000 });
    assert.ok(Date.now() - started >= 150, "the call really took its time (200 ms)");
    assert.equal(reply.status, 200);
    const result = assertInlineToolResult(resultOf(reply));
    assert.equal(textOf(result), "inline please");
  });

  test("legacy params.task does not promote a slow call to a task", async () => {
    const reply = await callTool(s.url, "slow_echo", { text: "still inline", ms: 4000 }, {}, { task: { ttl: 60_000 } });
    assert.equal(reply.status, 200);
    assert.equal(textOf(assertInlineToolResult(resultOf(reply))), "still inline");
  });

  test("a quick tool: plain JSON, inline", async () => {
    const reply = await callTool(s.url, "greet", { name: "Ada" });
    assert.match(reply.contentType, /application\/json/);
    assert.equal(textOf(assertInlineToolResult(resultOf(reply))), "Hello, Ada!");
  });
});

describe("policy 'always' (and 'required' per tool)", () => {
  let s: Stack;
  before(async () => {
    s = await stack({ policy: "always", tools: { build_report: "required" } });
  });

  test("a declaring client gets resultType 'task' at once, even for a quick tool; tasks/get finds it right away", async () => {
    const task = await createTask(s.url, "greet", { name: "Ada" });
    assert.equal(task.status, "working");
    assert.equal(task.ttlMs, 3_600_000);
    assert.equal(task.pollIntervalMs, 5000);
    const first = await getTask(s.url, task.taskId as string);
    assert.equal(first.taskId, task.taskId);
    assert.equal(first.createdAt, task.createdAt);
    const done = await waitForTask(s.url, task.taskId as string, hasStatus("completed"));
    assert.equal(textOf(done.result), "Hello, Ada!");
  });

  test("a slow tool is a task without waiting for it", async () => {
    const started = Date.now();
    const task = await createTask(s.url, "slow_echo", { text: "x", ms: LONG });
    assert.ok(Date.now() - started < 1000, "the CreateTaskResult did not wait for the 3 s call");
    assert.equal(task.status, "working");
    await cancelTask(s.url, task.taskId as string);
    await waitForTask(s.url, task.taskId as string, hasStatus("cancelled"));
  });

  test("a non-declaring client on an 'always' tool gets the result inline (streamed), never a task", async () => {
    const reply = await callTool(s.url, "slow_echo", { text: "streamed", ms: 8000 }, { capabilities: {} });
    assert.equal(reply.status, 200);
    assert.match(reply.contentType, /text\/event-stream/, "a 400 ms call is streamed as SSE");
    const result = assertInlineToolResult(resultOf(reply));
    assert.equal(textOf(result), "streamed");
    assert.ok(reply.events.every((e) => (e.result as { resultType?: string } | undefined)?.resultType !== "task"));

    const quick = await callTool(s.url, "greet", { name: "Bob" }, { capabilities: {} });
    assert.equal(textOf(assertInlineToolResult(resultOf(quick))), "Hello, Bob!");
  });

  test("declaring elicitation alone is not declaring the extension: still inline", async () => {
    const reply = await callTool(s.url, "greet", { name: "Cy" }, { capabilities: { elicitation: {} } });
    assert.equal(textOf(assertInlineToolResult(resultOf(reply))), "Hello, Cy!");
  });

  test("'required' + non-declaring client ⇒ -32021, HTTP 400, data.requiredCapabilities names the extension", async () => {
    let startedUpstream = false;
    const listener = (e: ToolStartedEvent) => {
      if (e.tool === "build_report") startedUpstream = true;
    };
    s.legacy.events.on("tool-started", listener);
    const reply = await callTool(s.url, "build_report", { month: "2025-01" }, { capabilities: { elicitation: {} } });
    const error = assertRpcError(reply, -32021, 400);
    assert.deepEqual(error.data, { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
    // No wait needed: the refusal is answered before anything is sent upstream, so nothing can start after it.
    s.legacy.events.off("tool-started", listener);
    assert.equal(startedUpstream, false, "the upstream tool was never started");
  });

  test("'required' + declaring client ⇒ a task", async () => {
    const task = await createTask(s.url, "build_report", { month: "2025-01" });
    await cancelTask(s.url, task.taskId as string);
    await waitForTask(s.url, task.taskId as string, hasStatus("cancelled"));
  });

  test("the extension declared on an EARLIER request does not count", async () => {
    await createTask(s.url, "greet", { name: "first" });
    const reply = await callTool(s.url, "greet", { name: "second" }, { capabilities: {} });
    assert.equal(textOf(assertInlineToolResult(resultOf(reply))), "Hello, second!");
  });
});

describe("policy 'auto'", () => {
  let s: Stack;
  before(async () => {
    s = await stack({ policy: "auto", autoAfterMs: AUTO_AFTER_MS });
    // Open the upstream session and read its catalog now, so the first call below is not slowed by it.
    await callTool(s.url, "greet", { name: "warm-up" }, { capabilities: {} });
  });

  test("a quick tool (greet) ⇒ inline result", async () => {
    const reply = await callTool(s.url, "greet", { name: "Ada" });
    assert.match(reply.contentType, /application\/json/);
    assert.equal(textOf(assertInlineToolResult(resultOf(reply))), "Hello, Ada!");
  });

  test("a slow tool (slow_echo) ⇒ a task, handed out after autoAfterMs", async () => {
    const started = Date.now();
    const task = await createTask(s.url, "slow_echo", { text: "later", ms: LONG });
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= AUTO_AFTER_MS - 20, `handed out after ${elapsed} ms, expected ≥ ${AUTO_AFTER_MS}`);
    assert.ok(elapsed < 2000, `handed out after ${elapsed} ms: it must not wait for the 3 s call`);
    assert.equal(task.status, "working");
    await cancelTask(s.url, task.taskId as string);
    await waitForTask(s.url, task.taskId as string, hasStatus("cancelled"));
  });

  test("a slow tool that finishes within the window of a longer call still completes as a task", async () => {
    // 600 legacy ms = 30 real ms < autoAfterMs: inline; 12000 legacy ms = 600 real ms > autoAfterMs: task.
    const quick = await callTool(s.url, "slow_echo", { text: "quick", ms: 600 });
    assert.equal(textOf(assertInlineToolResult(resultOf(quick))), "quick");
    const task = await createTask(s.url, "slow_echo", { text: "late", ms: 12_000 });
    const done = await waitForTask(s.url, task.taskId as string, hasStatus("completed"));
    assert.equal(textOf(done.result), "late");
    assert.equal((done.result as { resultType?: string }).resultType, "complete");
  });

  test("a non-declaring client on a slow 'auto' tool waits for the inline result", async () => {
    const reply = await callTool(s.url, "slow_echo", { text: "patient", ms: 12_000 }, { capabilities: {} });
    assert.match(reply.contentType, /text\/event-stream/);
    assert.equal(textOf(assertInlineToolResult(resultOf(reply))), "patient");
  });

  test("legacy params.task is ignored: no error, no promotion to a task", async () => {
    const reply = await callTool(s.url, "greet", { name: "Legacy" }, {}, { task: { ttl: 60_000 } });
    assert.equal(reply.status, 200);
    assert.equal(textOf(assertInlineToolResult(resultOf(reply))), "Hello, Legacy!");
    const undeclared = await callTool(s.url, "greet", { name: "Old" }, { capabilities: {} }, { task: { ttl: 60_000 } });
    assert.equal(textOf(assertInlineToolResult(resultOf(undeclared))), "Hello, Old!");
  });
});

describe("policy 'auto': a question before the task exists (MRTR, then the task)", () => {
  let s: Stack;
  before(async () => {
    s = await stack({ policy: "auto", autoAfterMs: AUTO_AFTER_MS });
  });

  test("round 1 is an inline input_required; round 2 (the answer) is a CreateTaskResult; the task completes with the answer", async () => {
    const first = resultOf(await callTool(s.url, "ask_then_work", { ms: LONG }, { capabilities: TASKS_AND_FORMS }));
    assert.equal(first.resultType, "input_required");
    assert.equal(first.taskId, undefined);
    assert.deepEqual(Object.keys(first.inputRequests as object), ["name"]);
    const second = resultOf(
      await callTool(
        s.url,
        "ask_then_work",
        { ms: LONG },
        { capabilities: TASKS_AND_FORMS },
        { requestState: first.requestState, inputResponses: { name: { action: "accept", content: { name: "Alice" } } } },
      ),
    );
    assert.equal(second.resultType, "task");
    assert.equal(second.requestState, undefined);
    assert.equal(second.inputRequests, undefined);
    const taskId = second.taskId as string;
    assert.equal((await getTask(s.url, taskId)).status, "working");
    await cancelTask(s.url, taskId);
    await waitForTask(s.url, taskId, hasStatus("cancelled"));
  });

  test("the same, with a quick second half: the task completes with the answer in its result", async () => {
    const first = resultOf(await callTool(s.url, "ask_then_work", { ms: 8_000 }, { capabilities: TASKS_AND_FORMS }));
    const second = resultOf(
      await callTool(
        s.url,
        "ask_then_work",
        { ms: 8_000 },
        { capabilities: TASKS_AND_FORMS },
        { requestState: first.requestState, inputResponses: { name: { action: "accept", content: { name: "Alice" } } } },
      ),
    );
    assert.equal(second.resultType, "task");
    const done = await waitForTask(s.url, second.taskId as string, hasStatus("completed"));
    assert.match(textOf(done.result), /Alice/);
  });
});

describe("policy 'auto' with a long autoAfterMs", () => {
  let s: Stack;
  before(async () => {
    s = await stack({ policy: "auto", autoAfterMs: 20_000 });
  });

  test("a tool that asks before autoAfterMs (two_rounds) ⇒ the question is asked inline first (MRTR), no task yet", async () => {
    const reply = await callTool(s.url, "two_rounds", {}, { capabilities: TASKS_AND_FORMS });
    const round = resultOf(reply);
    assert.equal(round.resultType, "input_required");
    assert.equal(round.taskId, undefined);
    assert.equal(typeof round.requestState, "string");
    assert.deepEqual(round.inputRequests, {
      first: {
        method: "elicitation/create",
        params: {
          mode: "form",
          message: "First name?",
          requestedSchema: { type: "object", properties: { first: { type: "string", title: "First name" } }, required: ["first"] },
        },
      },
    });
  });

  test("a client without elicitation is never asked: the same tool stays inline with its default", async () => {
    const started = nextEvent<ToolStartedEvent>(s.legacy.events, "tool-started", (e) => e.tool === "build_report");
    const reply = await callTool(s.url, "build_report", { month: "2025-03" }, { capabilities: TASKS_CAPS });
    await started;
    const result = assertInlineToolResult(resultOf(reply));
    assert.match(textOf(result), /without charts .*cannot ask/);
  });

  test("a quick tool stays inline", async () => {
    const reply = await callTool(s.url, "greet", { name: "Ada" });
    assert.equal(textOf(assertInlineToolResult(resultOf(reply))), "Hello, Ada!");
  });

  test("the retry answering the early question gets the task; the next question is the task's own (new keys, no requestState)", async () => {
    const first = resultOf(await callTool(s.url, "two_rounds", {}, { capabilities: TASKS_AND_FORMS }));
    const second = resultOf(
      await callTool(
        s.url,
        "two_rounds",
        {},
        { capabilities: TASKS_AND_FORMS },
        { requestState: first.requestState, inputResponses: { first: { action: "accept", content: { first: "Ada" } } } },
      ),
    );
    assert.equal(second.resultType, "task");
    const taskId = second.taskId as string;
    const asking = await waitForTask(s.url, taskId, hasStatus("input_required"));
    assert.deepEqual(Object.keys(asking.inputRequests as object), ["last"]);
    await taskRpc(s.url, "tasks/update", { taskId, inputResponses: { last: { action: "accept", content: { last: "Lovelace" } } } });
    const done = await waitForTask(s.url, taskId, hasStatus("completed"));
    assert.equal(textOf(done.result), "Hello, Ada Lovelace!");
  });
});
