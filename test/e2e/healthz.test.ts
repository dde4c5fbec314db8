// /livez, /readyz and /healthz: what orchestrators and operators see — liveness always, readiness
// only while the upstream answers and the store works, and live counts of what is held.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { resultOf, rpc, TASKS_CAPS } from "../support/mcpClient.js";
import { type Stack, startStack } from "../support/stack.js";
import { nextEvent } from "../support/waiting.js";

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

  test("answers ready with counts, and counts a held task while it runs", async () => {
    assert.deepEqual(await health(), {
      status: "ready",
      checks: { upstream: { ok: true, detail: { era: "legacy" } }, store: { ok: true } },
      heldTasks: 0,
      heldCalls: 0,
      inlineCalls: 0,
      listenStreams: 0,
      upstreamSessions: 1, // the readiness check's own session
    });
    const started = nextEvent(stack.legacy.events, "tool-started", (e: { tool: string }) => e.tool === "slow_echo");
    const task = resultOf(
      await rpc(stack.url, "tools/call", { name: "slow_echo", arguments: { text: "x", ms: 30_000 } }, { capabilities: TASKS_CAPS }),
    );
    await started;
    const during = await health();
    assert.equal(during.heldTasks, 1);
    assert.ok((during.upstreamSessions as number) >= 1);
    await rpc(stack.url, "tasks/cancel", { taskId: task.taskId as string }, { capabilities: TASKS_CAPS });
    assert.equal((await health()).heldTasks, 0);
  });
});

describe("readiness follows the upstream", () => {
  test("/readyz and /healthz are 503 naming the upstream while it is down, /livez stays 200", async () => {
    const stack = await startStack({ config: { upstream: { initializeTimeoutMs: 1_000, requestTimeoutMs: 1_000 } } as never });
    try {
      assert.equal((await fetch(new URL("/readyz", stack.url))).status, 200);
      await stack.legacy.close();
      const ready = await fetch(new URL("/readyz", stack.url));
      assert.equal(ready.status, 503);
      const body = (await ready.json()) as { status: string; checks: { upstream: { ok: boolean; error: string }; store: { ok: boolean } } };
      assert.equal(body.status, "not_ready");
      assert.equal(body.checks.upstream.ok, false);
      assert.match(body.checks.upstream.error, /Upstream (unreachable|call lost)|stopped answering/);
      assert.equal(body.checks.store.ok, true);
      assert.equal((await fetch(new URL("/healthz", stack.url))).status, 503);
      const live = await fetch(new URL("/livez", stack.url));
      assert.equal(live.status, 200);
      assert.deepEqual(await live.json(), { status: "ok" });
    } finally {
      await stack.gateway.close();
    }
  });
});
