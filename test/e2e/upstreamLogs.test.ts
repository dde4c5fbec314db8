// Upstream log messages (notifications/message) sent during a call reach a 2026-07-28 client on the
// call's SSE reply only when its request set _meta logLevel, and only at or above that level; a
// task shows an informative one as its statusMessage.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { JsonObject } from "../../src/protocol/wire.js";
import { resultOf, rpc, TASKS_CAPS } from "../support/mcpClient.js";
import { type Stack, startStack } from "../support/stack.js";
import { pollTask } from "../support/tasks.js";

const LOG_LEVEL = "io.modelcontextprotocol/logLevel";
const logFrames = (events: JsonObject[]) => events.filter((e) => e.method === "notifications/message").map((e) => e.params as JsonObject);

describe("upstream log messages", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ config: { tasks: { tools: { log_steps: "never" } } } });
  });
  after(() => stack.close());

  test("logLevel warning: the warning and error messages arrive on the call's stream, before the result", async () => {
    const reply = await rpc(stack.url, "tools/call", { name: "log_steps", arguments: {} }, { meta: { [LOG_LEVEL]: "warning" } });
    assert.match(reply.contentType, /text\/event-stream/);
    assert.deepEqual(logFrames(reply.events), [
      { level: "warning", logger: "log_steps", data: "step at warning" },
      { level: "error", logger: "log_steps", data: "step at error" },
    ]);
    assert.equal(reply.events.at(-1), reply.message);
    assert.deepEqual(resultOf(reply).content, [{ type: "text", text: "logged 4 messages" }]);
  });

  test("logLevel debug: every message", async () => {
    const reply = await rpc(stack.url, "tools/call", { name: "log_steps", arguments: {} }, { meta: { [LOG_LEVEL]: "debug" } });
    assert.deepEqual(
      logFrames(reply.events).map((p) => p.level),
      ["debug", "info", "warning", "error"],
    );
  });

  test("no logLevel: no log message at all (the spec forbids them then)", async () => {
    const reply = await rpc(stack.url, "tools/call", { name: "log_steps", arguments: {} });
    assert.deepEqual(logFrames(reply.events), []);
    assert.deepEqual(resultOf(reply).content, [{ type: "text", text: "logged 4 messages" }]);
  });
});

describe("upstream log messages in a task", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ config: { tasks: { tools: { log_steps: "always" } } } });
  });
  after(() => stack.close());

  test("the last informative message (info and above) is the task's statusMessage until the result", async () => {
    const created = resultOf(
      await rpc(
        stack.url,
        "tools/call",
        { name: "log_steps", arguments: {} },
        { capabilities: TASKS_CAPS, meta: { [LOG_LEVEL]: "debug" } },
      ),
    );
    assert.equal(created.resultType, "task");
    const done = await pollTask(stack.url, created.taskId as string, (t) => t.status === "completed");
    assert.equal(done.statusMessage, "step at error");
    assert.deepEqual((done.result as JsonObject).content, [{ type: "text", text: "logged 4 messages" }]);
  });
});
