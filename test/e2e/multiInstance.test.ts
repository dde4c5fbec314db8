// Several taskgate instances sharing tasks through a real Redis (fresh key prefix per run), and the
// same suite through PostgreSQL alone (a fresh database; skipped, saying why, when PostgreSQL is
// unreachable), in front of one real legacy server: a task started on one instance is polled,
// answered, cancelled and followed through another; another user still cannot see it; and when the
// instance holding it dies (a real child process, SIGKILLed), the task fails instead of staying `working`.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { LegacyServer } from "../../examples/legacy-server/server.js";
import type { Gateway } from "../../src/gateway.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { killHard, spawnGateway } from "../support/gatewayChild.js";
import { openListen, paramsOf, statusTrail } from "../support/listen.js";
import { errorOf, resultOf, rpc, TASKS_CAPS } from "../support/mcpClient.js";
import { freshDatabase, POSTGRES_SKIP } from "../support/postgres.js";
import { REDIS_SKIP } from "../support/redisServer.js";
import { type SharedRedisStack, startSharedRedisStack } from "../support/sharedRedisStack.js";
import { health } from "../support/stack.js";
import { pollTask } from "../support/tasks.js";
import { nextEvent } from "../support/waiting.js";

const CAPS = { ...TASKS_CAPS, elicitation: {} };

for (const backend of ["Redis", "PostgreSQL"] as const) {
  const skip = backend === "PostgreSQL" ? POSTGRES_SKIP : REDIS_SKIP;
  describe(`several instances sharing tasks through ${backend}`, skip === undefined ? {} : { skip }, () => suite(backend));
}

function suite(backend: "Redis" | "PostgreSQL"): void {
  let stack: SharedRedisStack;
  let legacy: LegacyServer;
  let a: Gateway;
  let b: Gateway;
  let c: Gateway;

  before(async () => {
    // Short leases: listen streams check the holders of followed tasks every leaseMs / 3.
    stack = await startSharedRedisStack({
      speed: 8,
      leaseMs: 3_000,
      config: { tasks: { tools: { build_report: "always", slow_echo: "always" } } },
      ...(backend === "PostgreSQL" ? { postgresUrl: await freshDatabase() } : {}),
    });
    ({ legacy, a, b, c } = stack);
  });

  after(() => stack.close());

  const startReport = async (on: Gateway, month: string) => {
    const created = resultOf(await rpc(on.url, "tools/call", { name: "build_report", arguments: { month } }, { capabilities: CAPS }));
    assert.equal(created.resultType, "task");
    return created.taskId as string;
  };

  test("a task started on A is polled and answered through B, and completes with B's answer", async () => {
    const taskId = await startReport(a, "2026-09");
    const seen = resultOf(await rpc(b.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS }));
    assert.equal(seen.taskId, taskId, "B reads the task A created, at once");
    const asking = await pollTask(b.url, taskId, (t) => t.status === "input_required");
    assert.deepEqual(Object.keys(asking.inputRequests as JsonObject), ["charts"]);

    const ack = await rpc(
      b.url,
      "tasks/update",
      { taskId, inputResponses: { charts: { action: "accept", content: { charts: true } } } },
      { capabilities: TASKS_CAPS },
    );
    assert.deepEqual(resultOf(ack), { resultType: "complete" });
    // A delivered it (it holds the call) before B acknowledged: the key is gone everywhere at once.
    for (const via of [a, b]) {
      const next = resultOf(await rpc(via.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS }));
      assert.equal(next.inputRequests, undefined);
    }
    const done = await pollTask(b.url, taskId, (t) => t.status === "completed", { timeoutMs: 20_000 });
    assert.match(JSON.stringify(done.result), /charts included/);
  });

  test("a bad answer sent through B is refused with A's -32602 and the question stays open", async () => {
    const taskId = await startReport(a, "2026-10");
    await pollTask(b.url, taskId, (t) => t.status === "input_required");
    const bad = await rpc(
      b.url,
      "tasks/update",
      { taskId, inputResponses: { charts: { action: "accept", content: { charts: "yes" } } } },
      { capabilities: TASKS_CAPS },
    );
    assert.equal(errorOf(bad).code, -32602);
    assert.match(errorOf(bad).message, /'charts' must be a boolean/);
    const still = resultOf(await rpc(a.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS }));
    assert.equal(still.status, "input_required");
    await rpc(b.url, "tasks/cancel", { taskId }, { capabilities: TASKS_CAPS });
  });

  test("another user gets -32602 on B for A's task, exactly like an unknown id", async () => {
    const taskId = await startReport(a, "2026-11");
    const foreign = await rpc(b.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS, token: "bob" });
    const unknown = await rpc(b.url, "tasks/get", { taskId: randomUUID() }, { capabilities: TASKS_CAPS, token: "bob" });
    assert.deepEqual(errorOf(foreign), errorOf(unknown));
    const cancel = await rpc(b.url, "tasks/cancel", { taskId }, { capabilities: TASKS_CAPS, token: "bob" });
    assert.equal(errorOf(cancel).code, -32602);
    assert.notEqual(resultOf(await rpc(a.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS })).status, "cancelled");
    await rpc(a.url, "tasks/cancel", { taskId }, { capabilities: TASKS_CAPS });
  });

  test("three instances: created on A, an answer through B reaches A (which checks it), cancelled through C, the same record on all", async () => {
    const taskId = await startReport(a, "2027-01");
    await pollTask(b.url, taskId, (t) => t.status === "input_required");
    const bad = await rpc(
      b.url,
      "tasks/update",
      { taskId, inputResponses: { charts: { action: "accept", content: { charts: 1 } } } },
      { capabilities: TASKS_CAPS },
    );
    assert.equal(errorOf(bad).code, -32602, "B's answer reached A, whose check refused it");
    assert.deepEqual(resultOf(await rpc(c.url, "tasks/cancel", { taskId }, { capabilities: TASKS_CAPS })), { resultType: "complete" });
    for (const via of [a, b, c]) {
      assert.equal(resultOf(await rpc(via.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS })).status, "cancelled");
    }
    assert.equal((await health(a.url)).heldTasks, 0, "A let go of the upstream call");
  });

  test("a cancel sent to B stops A's upstream call", async () => {
    const started = nextEvent(legacy.events, "tool-started", (e: { tool: string }) => e.tool === "slow_echo");
    const created = resultOf(
      await rpc(a.url, "tools/call", { name: "slow_echo", arguments: { text: "x", ms: 120_000 } }, { capabilities: TASKS_CAPS }),
    );
    const taskId = created.taskId as string;
    await started;
    const cancelled = nextEvent(legacy.events, "cancelled", (e: { tool: string }) => e.tool === "slow_echo");
    assert.deepEqual(resultOf(await rpc(b.url, "tasks/cancel", { taskId }, { capabilities: TASKS_CAPS })), { resultType: "complete" });
    await cancelled;
    assert.equal(resultOf(await rpc(b.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS })).status, "cancelled");
    assert.equal((await health(a.url)).heldTasks, 0);
  });

  test("a listen on B follows a task held by A: working → input_required → working → completed", async () => {
    const taskId = await startReport(a, "2026-12");
    const listen = await openListen(b.url, { taskIds: [taskId] }, { id: "multi", capabilities: TASKS_CAPS });
    try {
      await listen.waitFor((f) => f.method === "notifications/tasks" && paramsOf(f).status === "input_required", 20_000, "input_required");
      await rpc(a.url, "tasks/update", { taskId, inputResponses: { charts: { action: "decline" } } }, { capabilities: TASKS_CAPS });
      await listen.waitFor((f) => f.method === "notifications/tasks" && paramsOf(f).status === "completed", 20_000, "completed");
      assert.deepEqual(statusTrail(listen.frames, taskId), ["working", "input_required", "working", "completed"]);
    } finally {
      listen.close();
    }
  });

  test("when the instance holding a task dies, the task fails instead of staying working", async () => {
    const child = await spawnGateway(
      ["--upstream", legacy.url, "--port", "0", "--auth", "demo", ...stack.storeArgs],
      { TASKGATE_STORE_PREFIX: stack.prefix, TASKGATE_STORE_LEASE_MS: "1000", TASKGATE_TASKS_POLICY: "always" },
      stack.children,
    );
    const started = nextEvent(legacy.events, "tool-started", (e: { tool: string }) => e.tool === "slow_echo");
    const created = resultOf(
      await rpc(child.url, "tools/call", { name: "slow_echo", arguments: { text: "x", ms: 120_000 } }, { capabilities: TASKS_CAPS }),
    );
    const taskId = created.taskId as string;
    await started;
    assert.equal(
      resultOf(await rpc(b.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS })).status,
      "working",
      "holder alive: still working",
    );

    const listen = await openListen(b.url, { taskIds: [taskId] }, { id: "follower", capabilities: TASKS_CAPS });
    try {
      await killHard(child.process);
      // The follower learns it without anyone polling…
      const pushed = await listen.waitFor((f) => f.method === "notifications/tasks" && paramsOf(f).status === "failed", 10_000, "failed");
      assert.match(JSON.stringify(paramsOf(pushed).error), /instance holding this task is gone/);
    } finally {
      listen.close();
    }
    // …and a poll shows the same.
    const failed = resultOf(await rpc(a.url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS }));
    assert.equal(failed.status, "failed");
    assert.match((failed.error as { message: string }).message, /instance holding this task is gone/);
  });
}
