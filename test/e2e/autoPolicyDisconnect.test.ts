// `auto` waits autoAfterMs before handing out a task. A caller who leaves during that wait would
// never learn the task's id, so the upstream call is cancelled instead of becoming an orphan task.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { rpc, TASKS_CAPS } from "../support/mcpClient.js";
import { health, type Stack, startStack } from "../support/stack.js";
import { nextEvent } from "../support/waiting.js";

describe("policy 'auto' and a caller who leaves before the task is handed out", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ speed: 1, config: { tasks: { policy: "auto", autoAfterMs: 800 } } });
  });
  after(() => stack.close());

  test("the upstream call is cancelled and no task is held", async () => {
    const started = nextEvent(stack.legacy.events, "tool-started", (e: { tool: string }) => e.tool === "slow_echo");
    const cancelled = nextEvent(stack.legacy.events, "cancelled", (e: { tool: string }) => e.tool === "slow_echo");
    const controller = new AbortController();
    const pending = rpc(
      stack.url,
      "tools/call",
      { name: "slow_echo", arguments: { text: "bye", ms: 30_000 } },
      {
        capabilities: TASKS_CAPS,
        signal: controller.signal,
      },
    ).catch((error: unknown) => error);
    await started;
    controller.abort();
    assert.ok((await pending) instanceof Error, "the client aborted its own request");
    await cancelled;
    assert.equal((await health(stack.url)).heldTasks, 0);
  });
});
