// E2E: every kind of upstream question as TASK input, over real HTTP through a running taskgate in
// front of the real example legacy server. The client declares the tasks extension and the kind;
// the tools are configured `always`, so each tools/call is a task. inputRequests must have the
// right 2026 shape per kind (form / URL elicitation, sampling, roots), tasks/update with the
// answer completes the task, concurrent questions are answered one by one, a ping never shows up
// as input, and a bad answer is refused while the question stays open.
// Run: node --import tsx --test test/e2e/inputKindsTasks.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { RootsAnsweredEvent, SamplingAnsweredEvent } from "../../examples/legacy-server/state.js";
import { ErrorCode } from "../../src/protocol/errors.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { TASKS_CAPS } from "../support/mcpClient.js";
import { type Stack, startStack } from "../support/stack.js";
import { textOf } from "../support/taskShapes.js";
import { assertRpcError, createTask, getTask, hasStatus, keysOf, taskRpc, updateTask, waitForTask } from "../support/tasks.js";
import { nextEvent } from "../support/waiting.js";

type InputRequest = { method: string; params: JsonObject };

const ALWAYS = {
  ask_url: "always",
  ask_sampling: "always",
  list_roots: "always",
  two_questions: "always",
  two_rounds: "always",
  ping_then_greet: "always",
} as const;

const WITH_FORMS = { ...TASKS_CAPS, elicitation: {} };
const WITH_URLS = { ...TASKS_CAPS, elicitation: { url: {} } };
const WITH_SAMPLING = { ...TASKS_CAPS, sampling: {} };
const WITH_ROOTS = { ...TASKS_CAPS, roots: {} };

let stack: Stack;
before(async () => {
  stack = await startStack({ speed: 20, config: { tasks: { tools: { ...ALWAYS } } } });
});
after(async () => {
  await stack.close();
});

/** Starts `name` as a task and waits until it asks; returns the task id and the input_required task. */
async function startAndWaitForInput(name: string, args: JsonObject, capabilities: JsonObject, keys?: string[]) {
  const created = await createTask(stack.url, name, args, { capabilities });
  const taskId = created.taskId as string;
  const task = await waitForTask(stack.url, taskId, (t) => t.status === "input_required" && (!keys || keysOf(t).length === keys.length));
  if (keys) assert.deepEqual(keysOf(task), [...keys].sort());
  return { taskId, task, inputRequests: task.inputRequests as Record<string, InputRequest> };
}

function onlyKey(inputRequests: Record<string, InputRequest>): string {
  const keys = Object.keys(inputRequests);
  assert.equal(keys.length, 1, `expected one input request, got ${keys.join(", ")}`);
  return keys[0]!;
}

function assertInputRequestShape(key: string, request: InputRequest): void {
  assert.equal("jsonrpc" in request, false, `${key}: no jsonrpc`);
  assert.equal("id" in request, false, `${key}: no id`);
  assert.equal("_meta" in request.params, false, `${key}: no legacy _meta`);
}

async function completedText(taskId: string): Promise<string> {
  const done = await waitForTask(stack.url, taskId, hasStatus("completed", "failed", "cancelled"));
  assert.equal(done.status, "completed", JSON.stringify(done));
  return textOf(done.result);
}

describe("task input: each kind of question", () => {
  test("form elicitation over two rounds: first, then last (a fresh key), then the greeting", async () => {
    const { taskId, inputRequests } = await startAndWaitForInput("two_rounds", {}, WITH_FORMS, ["first"]);
    const first = inputRequests.first!;
    assertInputRequestShape("first", first);
    assert.equal(first.method, "elicitation/create");
    assert.equal(first.params.message, "First name?");
    assert.ok(first.params.mode === undefined || first.params.mode === "form");
    assert.deepEqual((first.params.requestedSchema as JsonObject).required, ["first"]);

    await updateTask(stack.url, taskId, { first: { action: "accept", content: { first: "Ada" } } });
    const second = await waitForTask(stack.url, taskId, (t) => t.status === "input_required" && keysOf(t).includes("last"));
    assert.deepEqual(keysOf(second), ["last"], "the answered key is gone and never reused");
    assert.equal((second.inputRequests as Record<string, InputRequest>).last!.params.message, "Last name?");

    await updateTask(stack.url, taskId, { last: { action: "accept", content: { last: "Lovelace" } } });
    assert.equal(await completedText(taskId), "Hello, Ada Lovelace!");
  });

  test("URL elicitation: mode url, url and message, NO elicitationId; accept completes with Authorized.", async () => {
    const { taskId, inputRequests } = await startAndWaitForInput("ask_url", {}, WITH_URLS);
    const key = onlyKey(inputRequests);
    const ask = inputRequests[key]!;
    assertInputRequestShape(key, ask);
    assert.equal(ask.method, "elicitation/create");
    assert.equal(ask.params.mode, "url");
    assert.equal(ask.params.message, "Authorize access to the example service");
    assert.match(ask.params.url as string, /^https:\/\/example\.com\/authorize\?/);
    assert.equal("elicitationId" in ask.params, false, "2026 URL elicitations carry no elicitationId");

    await updateTask(stack.url, taskId, { [key]: { action: "accept" } });
    assert.equal(await completedText(taskId), "Authorized.");
  });

  test("sampling: sampling/createMessage with the prompt; the model's answer completes the task", async () => {
    const { taskId, inputRequests } = await startAndWaitForInput("ask_sampling", { prompt: "What is six times seven?" }, WITH_SAMPLING);
    const key = onlyKey(inputRequests);
    const ask = inputRequests[key]!;
    assertInputRequestShape(key, ask);
    assert.equal(ask.method, "sampling/createMessage");
    const messages = ask.params.messages as { role: string; content: { type: string; text: string } }[];
    assert.equal(messages[0]!.role, "user");
    assert.deepEqual(messages[0]!.content, { type: "text", text: "What is six times seven?" });
    assert.equal(ask.params.maxTokens, 100);

    const answered = nextEvent<SamplingAnsweredEvent>(stack.legacy.events, "sampling-answered", (e) => e.tool === "ask_sampling");
    await updateTask(stack.url, taskId, { [key]: { role: "assistant", content: { type: "text", text: "42" }, model: "test-model" } });
    assert.match(await completedText(taskId), /42/);
    const event = await answered;
    assert.equal(event.model, "test-model");
  });

  test("roots: roots/list with empty params; the answered roots are listed", async () => {
    const { taskId, inputRequests } = await startAndWaitForInput("list_roots", {}, WITH_ROOTS);
    const key = onlyKey(inputRequests);
    assertInputRequestShape(key, inputRequests[key]!);
    assert.equal(inputRequests[key]!.method, "roots/list");
    assert.deepEqual(inputRequests[key]!.params, {});

    const answered = nextEvent<RootsAnsweredEvent>(stack.legacy.events, "roots-answered", (e) => e.tool === "list_roots");
    await updateTask(stack.url, taskId, { [key]: { roots: [{ uri: "file:///work/a", name: "A" }] } });
    assert.equal(await completedText(taskId), "Roots: file:///work/a");
    assert.deepEqual((await answered).roots, ["file:///work/a"]);
  });

  test("two_questions: answered one by one, the task stays input_required until both are answered", async () => {
    const { taskId, inputRequests } = await startAndWaitForInput("two_questions", {}, WITH_FORMS, ["colour", "size"]);
    assert.equal(inputRequests.colour!.params.message, "Pick a colour");
    assert.equal(inputRequests.size!.params.message, "Pick a size");

    await updateTask(stack.url, taskId, { colour: { action: "accept", content: { colour: "teal" } } });
    // Synchronously: the very next tasks/get no longer shows the answered key and still waits for the other.
    const partial = await getTask(stack.url, taskId);
    assert.equal(partial.status, "input_required");
    assert.deepEqual(keysOf(partial), ["size"]);
    // ... and it stays that way: the upstream cannot finish with one answer (an absence, so a window).
    await new Promise((r) => setTimeout(r, 150));
    const still = await getTask(stack.url, taskId);
    assert.equal(still.status, "input_required");
    assert.deepEqual(keysOf(still), ["size"]);

    await updateTask(stack.url, taskId, { size: { action: "accept", content: { size: "M" } } });
    assert.equal(await completedText(taskId), "colour=teal, size=M");
  });

  test("ping_then_greet completes without ever showing input_required", async () => {
    const pinged = nextEvent<{ tool: string }>(stack.legacy.events, "ping-answered", (e) => e.tool === "ping_then_greet");
    const created = await createTask(stack.url, "ping_then_greet", { name: "Grace" }, { capabilities: TASKS_CAPS });
    const taskId = created.taskId as string;
    const seen: string[] = [created.status as string];
    const done = await waitForTask(stack.url, taskId, (t) => {
      seen.push(t.status as string);
      return hasStatus("completed", "failed", "cancelled")(t);
    });
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.equal(textOf(done.result), "Pinged, then: Hello, Grace!");
    assert.equal(seen.includes("input_required"), false, `statuses seen: ${seen.join(", ")}`);
    await pinged;
  });
});

describe("task input: only declared kinds are shown", () => {
  test("declaring only tasks + sampling: two_rounds never shows an elicitation and completes with the fallback", async () => {
    const created = await createTask(stack.url, "two_rounds", {}, { capabilities: WITH_SAMPLING });
    const taskId = created.taskId as string;
    const seen: JsonObject[] = [];
    const done = await waitForTask(stack.url, taskId, (t) => {
      seen.push(t);
      return hasStatus("completed", "failed", "cancelled")(t);
    });
    assert.equal(done.status, "completed");
    assert.equal(textOf(done.result), "Hello, stranger! (the client cannot ask the user)");
    for (const t of seen) assert.equal(t.status === "input_required", false, `unexpected input: ${JSON.stringify(t)}`);
  });
});

describe("task input: bad answers", () => {
  test("a sampling answer without model → -32602 naming the problem; the question stays open; a correct answer completes", async () => {
    const { taskId, inputRequests } = await startAndWaitForInput("ask_sampling", { prompt: "Ping?" }, WITH_SAMPLING);
    const key = onlyKey(inputRequests);
    const answered = nextEvent<SamplingAnsweredEvent>(stack.legacy.events, "sampling-answered", (e) => e.tool === "ask_sampling", 400);
    answered.catch(() => undefined);

    const reply = await taskRpc(stack.url, "tasks/update", {
      taskId,
      inputResponses: { [key]: { role: "assistant", content: { type: "text", text: "Pong" } } },
    });
    const error = assertRpcError(reply, ErrorCode.InvalidParams);
    assert.match(error.message, /model/);
    assert.match(error.message, new RegExp(`inputResponses\\.${key}`));
    await assert.rejects(answered, /timed out/, "the bad answer never went upstream");

    const open = await getTask(stack.url, taskId);
    assert.equal(open.status, "input_required");
    assert.deepEqual(keysOf(open), [key], "the question stays open under the same key");
    assert.deepEqual((open.inputRequests as JsonObject)[key], inputRequests[key]);

    await updateTask(stack.url, taskId, { [key]: { role: "assistant", content: { type: "text", text: "Pong" }, model: "test-model" } });
    assert.equal(await completedText(taskId), "Model said: Pong");
  });

  test("a bad form answer (wrong type) → -32602; the question stays open; a correct one completes", async () => {
    const { taskId } = await startAndWaitForInput("two_questions", {}, WITH_FORMS, ["colour", "size"]);
    const reply = await taskRpc(stack.url, "tasks/update", {
      taskId,
      inputResponses: { colour: { action: "accept", content: { colour: "red" } }, size: { action: "accept", content: { size: "XXL" } } },
    });
    assert.match(assertRpcError(reply, ErrorCode.InvalidParams).message, /'size' must be one of/);
    const open = await getTask(stack.url, taskId);
    assert.deepEqual(keysOf(open), ["colour", "size"], "a refused update delivers nothing");

    await updateTask(stack.url, taskId, {
      colour: { action: "accept", content: { colour: "red" } },
      size: { action: "accept", content: { size: "L" } },
    });
    assert.equal(await completedText(taskId), "colour=red, size=L");
  });

  test("a bad roots answer (uri missing) → -32602; the question stays open", async () => {
    const { taskId, inputRequests } = await startAndWaitForInput("list_roots", {}, WITH_ROOTS);
    const key = onlyKey(inputRequests);
    const reply = await taskRpc(stack.url, "tasks/update", { taskId, inputResponses: { [key]: { roots: [{ name: "no uri" }] } } });
    assert.match(assertRpcError(reply, ErrorCode.InvalidParams).message, /uri/);
    assert.deepEqual(keysOf(await getTask(stack.url, taskId)), [key]);
    await updateTask(stack.url, taskId, { [key]: { roots: [] } });
    assert.equal(await completedText(taskId), "Roots: (none)");
  });
});
