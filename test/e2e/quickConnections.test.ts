// The quick requests to an HTTP upstream share a capped set of kept-alive connections
// (upstream.connections). Thirty held tasks (each call on a connection of its own) cancelled at
// once send thirty notifications/cancelled: with the cap at 2 they reach the real example legacy
// server over at most 2 new connections, and every call ends there cancelled.
// Run: node --import tsx --test test/e2e/quickConnections.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { ToolFinishedEvent } from "../../examples/legacy-server/state.js";
import { type Stack, startStack } from "../support/stack.js";
import { cancelTask, createTask, hasStatus, waitForTask } from "../support/tasks.js";
import { until } from "../support/waiting.js";

const TASKS = 30;

describe("quick requests share upstream.connections connections", () => {
  let s: Stack;
  const finished: ToolFinishedEvent[] = [];
  before(async () => {
    // Pings far apart: the only quick requests of the burst are the cancels.
    s = await startStack({ config: { tasks: { tools: { slow_echo: "always" } }, upstream: { connections: 2, pingIntervalMs: 600_000 } } });
    s.legacy.events.on("tool-finished", (event: ToolFinishedEvent) => finished.push(event));
  });
  after(async () => {
    await s?.close();
  });

  test(`${TASKS} cancels at once reach the upstream over at most 2 new connections`, async () => {
    const tasks = await Promise.all(
      Array.from({ length: TASKS }, (_, i) => createTask(s.url, "slow_echo", { text: `t${i}`, ms: 600_000 }, { token: "alice" })),
    );
    for (const task of tasks) await waitForTask(s.url, String(task.taskId), hasStatus("working"));
    const before = s.legacy.acceptedConnections();

    await Promise.all(tasks.map((task) => cancelTask(s.url, String(task.taskId))));
    await until(10_000, "every call ends upstream", () => (finished.length >= TASKS ? true : undefined));
    assert.deepEqual(
      finished.map((event) => event.outcome),
      Array(TASKS).fill("cancelled"),
      "each call was cancelled upstream by its notifications/cancelled",
    );
    const opened = s.legacy.acceptedConnections() - before;
    assert.ok(opened <= 2, `the burst opened ${opened} connections to the upstream`);
  });
});
