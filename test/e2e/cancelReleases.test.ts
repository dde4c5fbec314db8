// Cancelling a call releases what it held upstream: its HTTP request to the upstream is closed
// (a legacy server never answers a cancelled request, so waiting for an answer would keep the
// connection forever), so after many cancels the connections to the upstream are back to where
// they were. (Memory is measured by `npm run bench`, not asserted here.)

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { resultOf, rpc, TASKS_CAPS } from "../support/mcpClient.js";
import { health, type Stack, startStack } from "../support/stack.js";
import { pollTask } from "../support/tasks.js";
import { eventually, nextEvent } from "../support/waiting.js";

const TASKS = 40;

describe("cancelling held calls", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ speed: 1, config: { tasks: { tools: { slow_echo: "always" } } } });
  });
  after(() => stack.close());

  test(`${TASKS} cancelled tasks leave no connection to the upstream behind`, async () => {
    // Warm up: the identity's session (and its standalone stream) exists before we count.
    await rpc(stack.url, "tools/list", {});
    const idle = await stack.legacy.connectionCount();
    let started = 0;
    const allStarted = new Promise<void>((resolve) => {
      const onStart = (e: { tool: string }) => {
        if (e.tool === "slow_echo" && ++started === TASKS) {
          stack.legacy.events.off("tool-started", onStart);
          resolve();
        }
      };
      stack.legacy.events.on("tool-started", onStart);
    });
    const taskIds = await Promise.all(
      Array.from({ length: TASKS }, async (_, i) => {
        const created = resultOf(
          await rpc(
            stack.url,
            "tools/call",
            { name: "slow_echo", arguments: { text: `t${i}`, ms: 600_000 } },
            { capabilities: TASKS_CAPS },
          ),
        );
        return created.taskId as string;
      }),
    );
    await allStarted;
    const whileHeld = await stack.legacy.connectionCount();
    assert.ok(whileHeld >= TASKS, `each held call has its own streaming connection (${whileHeld} open, ${idle} before)`);

    const cancelled = Promise.all(taskIds.map(() => nextEvent(stack.legacy.events, "cancelled", () => true, 15_000)));
    for (const taskId of taskIds) await rpc(stack.url, "tasks/cancel", { taskId }, { capabilities: TASKS_CAPS });
    await cancelled;
    for (const taskId of taskIds) assert.equal((await pollTask(stack.url, taskId, (t) => t.status !== "working")).status, "cancelled");
    assert.equal((await health(stack.url)).heldTasks, 0);
    // Keep-alive sockets of the pool may linger a few seconds; the cancelled calls' own requests are closed.
    await eventually(
      async () => (await stack.legacy.connectionCount()) <= idle + 2,
      `connections back near ${idle} (now ${await stack.legacy.connectionCount()})`,
      10_000,
    );
  });
});
