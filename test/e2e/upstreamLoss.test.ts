// When the upstream loses a call (its session ends mid-call, the stream ends without a result),
// taskgate must not wait forever: the task fails and an inline caller gets an error, both saying so.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { errorOf, resultOf, rpc, TASKS_CAPS } from "../support/mcpClient.js";
import { type Stack, startStack } from "../support/stack.js";
import { pollTask } from "../support/tasks.js";
import { nextEvent } from "../support/waiting.js";

describe("a call the upstream loses mid-way", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ speed: 1, config: { tasks: { tools: { slow_echo: "always" } } } });
  });
  after(() => stack.close());

  test("a task whose upstream session ends fails with a message saying the call was lost", async () => {
    const started = nextEvent(stack.legacy.events, "tool-started", (e: { tool: string }) => e.tool === "slow_echo");
    const created = resultOf(
      await rpc(stack.url, "tools/call", { name: "slow_echo", arguments: { text: "x", ms: 60_000 } }, { capabilities: TASKS_CAPS }),
    );
    assert.equal(created.resultType, "task");
    await started;
    await stack.legacy.expireAllSessions();
    const task = await pollTask(stack.url, created.taskId as string, (t) => t.status !== "working", { timeoutMs: 10_000 });
    assert.equal(task.status, "failed");
    assert.equal((task.error as { code: number }).code, -32603);
    assert.match((task.error as { message: string }).message, /Upstream call lost: .*without a result/);
    // The next call opens a new upstream session and works.
    const greeting = resultOf(await rpc(stack.url, "tools/call", { name: "greet", arguments: { name: "again" } }));
    assert.deepEqual(greeting.content, [{ type: "text", text: "Hello, again!" }]);
  });

  test("an inline call whose upstream session ends gets a JSON-RPC error instead of hanging", async () => {
    const started = nextEvent(stack.legacy.events, "tool-started", (e: { tool: string }) => e.tool === "slow_echo");
    const pending = rpc(stack.url, "tools/call", { name: "slow_echo", arguments: { text: "y", ms: 60_000 } });
    await started;
    await stack.legacy.expireAllSessions();
    const reply = await pending;
    assert.equal(errorOf(reply).code, -32603);
    assert.match(errorOf(reply).message, /Upstream call lost/);
  });
});
