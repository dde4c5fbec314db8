// E2E: quotas per identity (issue 11, problem 6). quotas.maxRunningTasks and quotas.maxHeldCalls
// refuse a new call with HTTP 429 and a JSON-RPC error naming the quota, before anything reaches the
// upstream; quotas.requestsPerMinute answers 429 with Retry-After, counting the MCP endpoint, the
// task inventory (/me, /tasks, events) and /approvals in one bucket per identity. Other identities are not
// affected, and nothing already running is harmed: the calls and tasks that were admitted finish
// with their normal results. Real example legacy server, real HTTP.
// Run: node --import tsx --test test/e2e/quotas.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ErrorCode } from "../../src/protocol/errors.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { api, baseOf } from "../support/inventory.js";
import { errorOf, resultOf, rpc } from "../support/mcpClient.js";
import { type Stack, startStack } from "../support/stack.js";
import { assertRpcError, callTool, createTask, getTask, hasStatus, TERMINAL, waitForTask } from "../support/tasks.js";
import { eventually, nextEvent } from "../support/waiting.js";

const SPEED = 10; // slow_echo's ms are divided by this
const idOf = (task: Record<string, unknown>) => String((task.task as { taskId: string } | undefined)?.taskId ?? task.taskId);
const textOf = (result: unknown) => JSON.stringify((result as { content?: unknown }).content);

function startedCount(stack: Stack): () => number {
  let started = 0;
  stack.legacy.events.on("tool-started", () => started++);
  return () => started;
}

describe("quotas.maxRunningTasks", () => {
  let stack: Stack;
  let started: () => number;
  before(async () => {
    stack = await startStack({ speed: SPEED, config: { tasks: { policy: "always" }, quotas: { maxRunningTasks: 2 } } });
    started = startedCount(stack);
  });
  after(() => stack.close());

  test("a third running task is refused (429, named); Bob is not affected; the two running ones complete untouched", async () => {
    const first = await createTask(stack.url, "slow_echo", { text: "one", ms: 15_000 }, { token: "alice" });
    const second = await createTask(stack.url, "slow_echo", { text: "two", ms: 15_000 }, { token: "alice" });
    // Both reached the upstream (a task's handle can go out just before its call starts there).
    await eventually(() => started() >= 2, "both tasks' calls started upstream");
    const beforeRefusal = started();
    assert.equal(beforeRefusal, 2);

    const refused = await callTool(stack.url, "slow_echo", { text: "three", ms: 100 }, { token: "alice" });
    const error = assertRpcError(refused, ErrorCode.InternalError, 429);
    assert.match(error.message, /Quota exceeded: this identity already has 2 running tasks \(quotas\.maxRunningTasks\)/);
    assert.deepEqual(error.data, { reason: "quota_exceeded", quota: "quotas.maxRunningTasks", limit: 2 });
    assert.equal(refused.headers.get("retry-after"), null, "no Retry-After: nobody knows when a task ends");

    const bob = await createTask(stack.url, "slow_echo", { text: "bob", ms: 100 }, { token: "bob" });
    assert.equal((await waitForTask(stack.url, idOf(bob), TERMINAL, { token: "bob" })).status, "completed");
    // No wait needed: the refusal was answered before Bob's task was created, so a refused call that
    // had reached the upstream would have been counted before Bob's completed.
    assert.equal(started() - beforeRefusal, 1, "only Bob's call reached the upstream, not the refused one");

    for (const [task, text] of [
      [first, "one"],
      [second, "two"],
    ] as const) {
      const done = await waitForTask(stack.url, idOf(task), TERMINAL, { token: "alice", timeoutMs: 10_000 });
      assert.equal(done.status, "completed");
      assert.match(textOf(done.result), new RegExp(text));
    }
    // Room again once they ended.
    const again = await createTask(stack.url, "slow_echo", { text: "four", ms: 100 }, { token: "alice" });
    assert.equal((await waitForTask(stack.url, idOf(again), TERMINAL, { token: "alice" })).status, "completed");
  });

  test("a cancelled task frees its place at once", async () => {
    const a = await createTask(stack.url, "slow_echo", { text: "a", ms: 60_000 }, { token: "carol" });
    const b = await createTask(stack.url, "slow_echo", { text: "b", ms: 60_000 }, { token: "carol" });
    assertRpcError(await callTool(stack.url, "slow_echo", { text: "c", ms: 100 }, { token: "carol" }), ErrorCode.InternalError, 429);
    await rpc(
      stack.url,
      "tasks/cancel",
      { taskId: idOf(a) },
      { token: "carol", capabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } },
    );
    await waitForTask(stack.url, idOf(a), hasStatus("cancelled"), { token: "carol" });
    const c = await createTask(stack.url, "slow_echo", { text: "c", ms: 100 }, { token: "carol" });
    assert.equal((await waitForTask(stack.url, idOf(c), TERMINAL, { token: "carol" })).status, "completed");
    assert.equal((await getTask(stack.url, idOf(b), "carol")).status, "working", "the other one runs on");
  });
});

describe("quotas.maxHeldCalls", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ speed: SPEED, config: { tasks: { policy: "never" }, quotas: { maxHeldCalls: 1 } } });
  });
  after(() => stack.close());

  test("a second inline call while one is open is refused (429, named); the open one answers normally", async () => {
    const admitted = nextEvent(stack.legacy.events, "tool-started");
    const inFlight = callTool(stack.url, "slow_echo", { text: "held", ms: 10_000 }, { token: "alice" });
    await admitted; // held by the gateway once its call reached the upstream
    const refused = await callTool(stack.url, "slow_echo", { text: "second", ms: 100 }, { token: "alice" });
    const error = assertRpcError(refused, ErrorCode.InternalError, 429);
    assert.match(error.message, /quotas\.maxHeldCalls/);
    const read = await rpc(stack.url, "prompts/get", { name: "summarize", arguments: { topic: "x" } }, { token: "alice" });
    assert.equal(read.status, 429, "prompts/get is a held call too");

    const bob = await callTool(stack.url, "slow_echo", { text: "bob", ms: 100 }, { token: "bob" });
    assert.match(textOf(resultOf(bob)), /bob/);

    const held = await inFlight;
    assert.equal(held.status, 200);
    assert.match(textOf(resultOf(held)), /held/, "the admitted call was not harmed");
    const after = await callTool(stack.url, "slow_echo", { text: "after", ms: 100 }, { token: "alice" });
    assert.match(textOf(resultOf(after)), /after/, "room again once it answered");
  });
});

describe("quotas.requestsPerMinute", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ speed: SPEED, config: { tasks: { policy: "always" }, quotas: { requestsPerMinute: 30 } } });
  });
  after(() => stack.close());

  test("past the burst: 429 with Retry-After; Bob is not affected; a running task finishes and is readable after waiting", async () => {
    const task = await createTask(stack.url, "slow_echo", { text: "runs on", ms: 5_000 }, { token: "alice" });
    let refused: Awaited<ReturnType<typeof rpc>> | undefined;
    for (let i = 0; i < 40 && !refused; i++) {
      const reply = await rpc(
        stack.url,
        "tasks/get",
        { taskId: idOf(task) },
        { token: "alice", capabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } },
      );
      if (reply.status === 429) refused = reply;
    }
    assert.ok(refused, "the 31st request or so is refused");
    const retryAfter = Number(refused.headers.get("retry-after"));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 2, `Retry-After ${refused.headers.get("retry-after")}`);
    const error = errorOf(refused);
    assert.match(error.message, /Too many requests.*quotas\.requestsPerMinute/);
    assert.equal(error.data?.reason, "rate_limited");

    assert.equal((await rpc(stack.url, "tools/list", {}, { token: "bob" })).status, 200, "Bob has his own bucket");

    // Letting time pass is what is tested here: the bucket refills after Retry-After.
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 600));
    const done = await waitForTask(stack.url, idOf(task), TERMINAL, { token: "alice", timeoutMs: 10_000 });
    assert.equal(done.status, "completed");
    assert.match(textOf(done.result), /runs on/);
  });
});

describe("quotas.requestsPerMinute on the inventory and approvals routes", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ speed: SPEED, config: { quotas: { requestsPerMinute: 10 } } });
  });
  after(() => stack.close());

  test("they count in the identity's MCP bucket: past it 429 with Retry-After and the rate named, on every route; Bob unaffected", async () => {
    const base = baseOf(stack.url);
    for (let i = 0; i < 5; i++) assert.equal((await rpc(stack.url, "tools/list", {}, { token: "alice" })).status, 200);
    for (const path of ["/me", "/tasks", "/approvals", "/tasks?limit=5", "/me"]) {
      assert.equal((await api(base, "GET", path, "alice")).status, 200, path);
    }
    // Ten used; the bucket refills one every 6 s, so at most one more (if the test ran slow) passes.
    let refused: Awaited<ReturnType<typeof api>> | undefined;
    for (let i = 0; i < 2 && !refused; i++) {
      const reply = await api(base, "GET", "/tasks", "alice");
      if (reply.status === 429) refused = reply;
    }
    assert.ok(refused, "the eleventh request or so is refused");
    const retryAfter = Number(refused.headers.get("retry-after"));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 6, `Retry-After ${refused.headers.get("retry-after")}`);
    const error = refused.body.error as JsonObject;
    assert.equal(error.code, "rate_limited");
    assert.match(
      String(error.message),
      /^Too many requests: this identity is over its request rate \(quotas\.requestsPerMinute\); retry in \d+ s$/,
    );

    const approvals = await api(base, "GET", "/approvals", "alice");
    assert.equal(approvals.status, 429);
    assert.equal((approvals.body.error as JsonObject).code, "rate_limited");
    assert.ok(Number(approvals.headers.get("retry-after")) >= 1);
    assert.equal((await api(base, "GET", "/tasks/events", "alice")).status, 429, "the events stream too");
    const mcp = await rpc(stack.url, "tools/list", {}, { token: "alice" });
    assert.equal(mcp.status, 429, "the inventory used the MCP endpoint's bucket");
    assert.equal(errorOf(mcp).data?.reason, "rate_limited");

    assert.equal((await api(base, "GET", "/me", "bob")).status, 200, "Bob has his own bucket");
    assert.equal((await api(base, "GET", "/approvals", "bob")).status, 200);
  });
});

describe("quotas: a call that becomes a task moves from the held count to the task count", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({
      speed: SPEED,
      config: { tasks: { policy: "auto", autoAfterMs: 100 }, quotas: { maxHeldCalls: 1, maxRunningTasks: 1 } },
    });
  });
  after(() => stack.close());

  test("policy auto: once the slow call is a task, an inline call has room again, and a second task has none", async () => {
    const task = await createTask(stack.url, "slow_echo", { text: "long", ms: 10_000 }, { token: "alice" });
    const inline = await callTool(stack.url, "slow_echo", { text: "quick", ms: 0 }, { token: "alice", capabilities: {} });
    assert.equal(inline.status, 200, JSON.stringify(inline.message));
    assert.match(textOf(resultOf(inline)), /quick/, "the held place was freed when the call became a task");
    const second = await callTool(stack.url, "slow_echo", { text: "second task", ms: 100 }, { token: "alice" });
    assert.match(
      assertRpcError(second, ErrorCode.InternalError, 429).message,
      /quotas\.maxRunningTasks/,
      "a call that may become a task needs task room",
    );
    const done = await waitForTask(stack.url, idOf(task), TERMINAL, { token: "alice", timeoutMs: 10_000 });
    assert.equal(done.status, "completed");
  });
});
