// /healthz: what the Docker HEALTHCHECK and operators see, with live counts of what is held.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { nextEvent, resultOf, rpc, startStack, TASKS_CAPS, type Stack } from "./kit.js";

describe("GET /healthz", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ speed: 1, config: { tasks: { tools: { slow_echo: "always" } } } });
  });
  after(() => stack.close());

  const health = async () => {
    const response = await fetch(new URL("/healthz", stack.url));
    assert.equal(response.status, 200);
    return (await response.json()) as Record<string, unknown>;
  };

  test("answers ok with counts, and counts a held task while it runs", async () => {
    assert.deepEqual(await health(), { status: "ok", heldTasks: 0, heldCalls: 0, listenStreams: 0, upstreamSessions: 0 });
    const started = nextEvent(stack.legacy.events, "tool-started", (e: { tool: string }) => e.tool === "slow_echo");
    const task = resultOf(await rpc(stack.url, "tools/call", { name: "slow_echo", arguments: { text: "x", ms: 30_000 } }, { capabilities: TASKS_CAPS }));
    await started;
    const during = await health();
    assert.equal(during.heldTasks, 1);
    assert.ok((during.upstreamSessions as number) >= 1);
    await rpc(stack.url, "tasks/cancel", { taskId: task.taskId as string }, { capabilities: TASKS_CAPS });
    assert.equal((await health()).heldTasks, 0);
  });
});
