// GET /metrics (issue 12) as Prometheus scrapes it, in front of the real example legacy server:
// a task's life moves the counters and the gauges of what is held; requests are counted by method
// and outcome; an upstream failure counts under the reason the client was given, a store failure
// under its operation; the text names no identity; several gateways in one process keep their own
// numbers. The store fault is a real throwaway redis-server told to refuse writes (maxmemory 1).

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { createClient } from "@redis/client";
import { ConfigSchema } from "../../src/config/schema.js";
import { startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/observability/logger.js";
import { errorOf, resultOf, rpc, TASKS_CAPS } from "../support/mcpClient.js";
import { type Scrape, scrape, waitForMetric } from "../support/metrics.js";
import { deadUpstreamUrl } from "../support/ports.js";
import { needsRedis, RedisProcess } from "../support/redisServer.js";
import { type Stack, startStack } from "../support/stack.js";
import { pollTask } from "../support/tasks.js";

const TASKS_AND_FORMS = { ...TASKS_CAPS, elicitation: {} };
/** ask_then_work's work after the answer, at speed 1: long enough to see the task working. */
const WORK_MS = 4_000;

const requests = (s: Scrape, method: string, outcome: string) => s.find("taskgate_requests_total", { method, outcome }) ?? 0;
const durations = (s: Scrape, method: string, outcome: string) =>
  s.find("taskgate_request_duration_seconds_count", { method, outcome }) ?? 0;
const held = (s: Scrape, status: string) => s.value("taskgate_tasks_held", { status });

describe("GET /metrics", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ speed: 1, config: { tasks: { tools: { ask_then_work: "always" } } } });
  });
  after(() => stack.close());

  test("a task's life: created → input_required → working → completed moves its counters and gauges", async () => {
    const before = await scrape(stack.url);
    assert.equal(held(before, "working") + held(before, "input_required"), 0);

    const created = await rpc(
      stack.url,
      "tools/call",
      { name: "ask_then_work", arguments: { ms: WORK_MS } },
      { capabilities: TASKS_AND_FORMS, token: "ada" },
    );
    const taskId = resultOf(created).taskId as string;
    assert.ok(taskId, JSON.stringify(created.message));

    const asking = await waitForMetric(stack.url, "taskgate_tasks_held", { status: "input_required" }, 1);
    assert.equal(held(asking, "working"), 0);
    assert.equal(asking.value("taskgate_tasks_created_total"), before.value("taskgate_tasks_created_total") + 1);
    assert.equal(requests(asking, "tools/call", "task"), requests(before, "tools/call", "task") + 1);
    assert.equal(durations(asking, "tools/call", "task"), durations(before, "tools/call", "task") + 1);
    assert.equal(asking.value("taskgate_upstream_calls"), 1, "the task's upstream call runs");
    assert.equal(asking.value("taskgate_parked_calls"), 0, "a task's call is not parked");
    assert.equal(asking.value("taskgate_inline_calls"), 0);
    assert.ok(asking.value("taskgate_upstream_sessions") >= 1);
    assert.ok(asking.value("taskgate_store_operation_duration_seconds_count", { operation: "create" }) >= 1);

    const task = await pollTask(stack.url, taskId, (t) => t.status === "input_required", { token: "ada" });
    const [key] = Object.keys(task.inputRequests as object);
    const answered = await rpc(
      stack.url,
      "tasks/update",
      { taskId, inputResponses: { [key!]: { action: "accept", content: { name: "Ada" } } } },
      { capabilities: TASKS_CAPS, token: "ada" },
    );
    assert.equal(answered.status, 200, JSON.stringify(answered.message));

    const working = await waitForMetric(stack.url, "taskgate_tasks_held", { status: "working" }, 1, WORK_MS - 500);
    assert.equal(held(working, "input_required"), 0);
    assert.equal(requests(working, "tasks/update", "ok"), requests(before, "tasks/update", "ok") + 1);

    const done = await waitForMetric(
      stack.url,
      "taskgate_tasks_finished_total",
      { status: "completed" },
      (v) => v === before.value("taskgate_tasks_finished_total", { status: "completed" }) + 1,
      WORK_MS + 10_000,
    );
    assert.equal(held(done, "working") + held(done, "input_required"), 0, "nothing held once it completed");
    assert.equal(done.value("taskgate_upstream_calls"), 0);
    for (const status of ["failed", "cancelled"]) {
      assert.equal(done.value("taskgate_tasks_finished_total", { status }), before.value("taskgate_tasks_finished_total", { status }));
    }
    assert.ok(requests(done, "tasks/get", "ok") > requests(before, "tasks/get", "ok"));
    assert.equal(done.sum("taskgate_store_errors_total"), 0);
    assert.equal(done.sum("taskgate_upstream_errors_total"), 0);
    assert.equal((await pollTask(stack.url, taskId, () => true, { token: "ada" })).status, "completed");
  });

  test("requests by method and outcome: an inline result, a tool error, an unknown tool, a refused token", async () => {
    const before = await scrape(stack.url);
    await rpc(stack.url, "tools/call", { name: "greet", arguments: { name: "Ada" } });
    await rpc(stack.url, "tools/call", { name: "fail_tool", arguments: {} });
    assert.equal(errorOf(await rpc(stack.url, "tools/call", { name: "no_such_tool", arguments: {} })).code, -32602);
    assert.equal((await rpc(stack.url, "tools/list", {}, { token: null })).status, 401);
    const after = await waitForMetric(
      stack.url,
      "taskgate_requests_total",
      { method: "none", outcome: "rejected" },
      (v) => v === requests(before, "none", "rejected") + 1,
    );
    for (const [method, outcome] of [
      ["tools/call", "ok"],
      ["tools/call", "tool_error"],
      ["tools/call", "error"],
    ] as const) {
      assert.equal(requests(after, method, outcome), requests(before, method, outcome) + 1, `${method} ${outcome}`);
    }
  });

  test("what the text holds: HELP and TYPE for each family, Node process metrics prefixed, no identity anywhere", async () => {
    const scraped = await scrape(stack.url);
    for (const [name, type] of [
      ["taskgate_requests_total", "counter"],
      ["taskgate_request_duration_seconds", "histogram"],
      ["taskgate_tasks_held", "gauge"],
      ["taskgate_upstream_errors_total", "counter"],
      ["taskgate_store_operation_duration_seconds", "histogram"],
      ["taskgate_process_cpu_seconds_total", "counter"],
      ["taskgate_nodejs_eventloop_lag_seconds", "gauge"],
    ]) {
      assert.match(scraped.text, new RegExp(`^# TYPE ${name} ${type}$`, "m"));
      assert.match(scraped.text, new RegExp(`^# HELP ${name} .+$`, "m"));
    }
    assert.ok(
      scraped.samples.every((s) => s.name.startsWith("taskgate_")),
      "every metric is taskgate_…",
    );
    // The callers of this file were alice (the kit's default) and ada: neither appears, nor their tokens' hashes.
    assert.doesNotMatch(scraped.text, /alice|ada\b|Bearer/i);
    for (const reason of ["upstream_unreachable", "upstream_lost", "upstream_timeout"]) {
      assert.notEqual(scraped.find("taskgate_upstream_errors_total", { reason }), undefined, `${reason} is listed before it happens`);
    }
  });

  test("several gateways in one process keep their own numbers", async () => {
    const other = await startStack();
    try {
      await rpc(other.url, "tools/list", {});
      await rpc(other.url, "tools/list", {});
      const mine = await scrape(stack.url);
      const theirs = await waitForMetric(other.url, "taskgate_requests_total", { method: "tools/list", outcome: "ok" }, 2);
      assert.equal(theirs.value("taskgate_tasks_created_total"), 0);
      assert.ok(mine.value("taskgate_tasks_created_total") >= 1);
    } finally {
      await other.close();
    }
  });
});

describe("upstream errors by reason", () => {
  test("an upstream nobody listens on: the client's reason is the reason counted", async () => {
    const gateway = await startGateway(
      ConfigSchema.parse({
        port: 0,
        auth: { mode: "demo" },
        upstream: { url: await deadUpstreamUrl() },
        shutdown: { graceMs: 0 },
      }),
      { log: createLogger(process.env.TEST_LOG_LEVEL ?? "silent") },
    );
    try {
      const before = await scrape(gateway.url);
      const reply = await rpc(gateway.url, "tools/list", {});
      assert.equal(reply.status, 502, JSON.stringify(reply.message));
      const reason = errorOf(reply).data?.reason as string;
      assert.equal(reason, "upstream_unreachable");
      const after = await waitForMetric(gateway.url, "taskgate_requests_total", { method: "tools/list", outcome: "failed" }, 1);
      assert.ok(
        after.value("taskgate_upstream_errors_total", { reason }) >= before.value("taskgate_upstream_errors_total", { reason }) + 1,
        `upstream_errors_total{reason="${reason}"} went from ${before.value("taskgate_upstream_errors_total", { reason })} to ${after.value("taskgate_upstream_errors_total", { reason })}`,
      );
      assert.equal(after.value("taskgate_upstream_errors_total", { reason: "upstream_lost" }), 0, "only the reason that happened");
    } finally {
      await gateway.close();
    }
  });

  test("an upstream that dies during a call: upstream_lost", async () => {
    const stack = await startStack({ speed: 1 });
    try {
      const started = new Promise((resolve) => stack.legacy.events.once("tool-started", resolve));
      const reply = rpc(stack.url, "tools/call", { name: "slow_echo", arguments: { text: "x", ms: 60_000 } });
      await started;
      const before = await scrape(stack.url);
      assert.equal(before.value("taskgate_upstream_calls"), 1);
      assert.equal(before.value("taskgate_inline_calls"), 1);
      await stack.legacy.close();
      const reason = errorOf(await reply).data?.reason as string;
      assert.equal(reason, "upstream_lost");
      const after = await scrape(stack.url);
      assert.ok(after.value("taskgate_upstream_errors_total", { reason }) >= 1);
      assert.equal(after.value("taskgate_upstream_calls"), 0);
    } finally {
      await stack.gateway.close();
    }
  });
});

describe("store errors by operation", () => {
  test("a Redis that refuses writes: task creation fails store_unavailable and counts as a create error", needsRedis, async () => {
    const redis = await RedisProcess.start();
    let stack: Stack | undefined;
    try {
      stack = await startStack({
        speed: 1,
        config: { store: { kind: "redis", url: redis.url, prefix: `metrics-${randomUUID()}` }, tasks: { tools: { slow_echo: "always" } } },
      });
      const before = await scrape(stack.url);
      const admin = createClient({ url: redis.url });
      await admin.connect();
      try {
        await admin.configSet({ "maxmemory-policy": "noeviction", maxmemory: "1" });
        const reply = await rpc(
          stack.url,
          "tools/call",
          { name: "slow_echo", arguments: { text: "x", ms: 60_000 } },
          { capabilities: TASKS_CAPS },
        );
        assert.equal(reply.status, 503, JSON.stringify(reply.message));
        assert.equal(errorOf(reply).data?.reason, "store_unavailable");
        const after = await waitForMetric(stack.url, "taskgate_requests_total", { method: "tools/call", outcome: "failed" }, 1);
        assert.equal(
          after.value("taskgate_store_errors_total", { operation: "create" }),
          before.value("taskgate_store_errors_total", { operation: "create" }) + 1,
        );
        assert.equal(after.value("taskgate_store_errors_total", { operation: "get" }), 0, "reads still work");
        assert.equal(after.value("taskgate_tasks_created_total"), 0, "a task that was not stored was not created");
        await waitForMetric(stack.url, "taskgate_upstream_calls", {}, 0); // its upstream call was stopped
      } finally {
        await admin.configSet("maxmemory", "0");
        await admin.close();
      }
    } finally {
      await stack?.close();
      await redis.close();
    }
  });
});
