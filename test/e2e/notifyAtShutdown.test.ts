// E2E: a shutdown tells the owners of the tasks it fails. taskgate holds alice's slow_echo task (the
// real example legacy server) and shuts down: the task fails, and its `failed` webhook, refused
// once, is sent again before the process lets go instead of waiting for a retry that never comes. A receiver that
// never answers holds the shutdown no longer than notify.timeoutMs, and what it did not take is
// logged as dropped, with its count.
// Run: node --import tsx --test test/e2e/notifyAtShutdown.test.ts

import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, describe, test } from "node:test";
import pino from "pino";
import { SHUTDOWN } from "../../src/protocol/reasons.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { type Receiver, startReceiver } from "../support/servers/notifyReceivers.js";
import { type Stack, startStack } from "../support/stack.js";
import { createTask, hasStatus, waitForTask } from "../support/tasks.js";

const SECRET = "webhook-secret-0123456789abcdef";

function capturedLog(lines: JsonObject[]) {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) if (line) lines.push(JSON.parse(line) as JsonObject);
      done();
    },
  });
  return pino({ level: "info" }, sink);
}

async function stackWithHook(hook: Receiver, lines: JsonObject[], timeoutMs: number): Promise<Stack> {
  return startStack({
    log: capturedLog(lines),
    config: {
      tasks: { policy: "always" },
      notify: { webhooks: [{ url: hook.url, secret: SECRET, events: ["failed"] }], timeoutMs, attempts: 3, backoffMs: 10_000 },
    },
  });
}

describe("notifications at shutdown", () => {
  const receivers: Receiver[] = [];
  /** Stacks whose gateway a test has not closed yet (it failed before). */
  const open = new Set<Stack>();
  after(async () => {
    for (const s of open) await s.close();
    for (const r of receivers) await r.close();
  });

  test("the task a shutdown fails is told so before taskgate exits, its retry sent at once", async () => {
    // The first send fails (500) and its retry is 10 s away (backoffMs): the shutdown sends it now.
    const hook = await startReceiver((n) => (n === 1 ? 500 : 200));
    receivers.push(hook);
    const lines: JsonObject[] = [];
    const s = await stackWithHook(hook, lines, 5_000);
    open.add(s);
    const task = await createTask(s.url, "slow_echo", { text: "long", ms: 600_000 }, { token: "alice" });
    await waitForTask(s.url, String(task.taskId), hasStatus("working"));
    assert.equal(hook.received.length, 0, "nothing sent while the task works");

    await s.gateway.close();
    open.delete(s);
    await s.legacy.close();
    assert.deepEqual(
      hook.received.map((r) => r.status),
      [500, 200],
      "the failed webhook, refused once, was sent again before close() returned",
    );
    const payload = JSON.parse(hook.received[1]!.body.toString("utf8")) as JsonObject;
    assert.equal(payload.event, "failed");
    assert.equal(payload.taskId, task.taskId);
    assert.equal(payload.statusMessage, SHUTDOWN.taskFailed);
    assert.ok(lines.some((line) => line.event === "notify.delivered" && line.taskId === task.taskId));
  });

  test("a receiver that never answers holds the shutdown for about notify.timeoutMs; each notification ends delivered, failed or dropped", async () => {
    const hook = await startReceiver(() => 0);
    receivers.push(hook);
    const lines: JsonObject[] = [];
    const s = await stackWithHook(hook, lines, 400);
    open.add(s);
    // More tasks than the queue has workers (4): some are still waiting when the limit passes.
    const tasks = await Promise.all(
      Array.from({ length: 6 }, (_, i) => createTask(s.url, "slow_echo", { text: `long ${i}`, ms: 600_000 }, { token: "alice" })),
    );
    for (const task of tasks) await waitForTask(s.url, String(task.taskId), hasStatus("working"));

    const started = Date.now();
    await s.gateway.close();
    const tookMs = Date.now() - started;
    open.delete(s);
    await s.legacy.close();
    assert.ok(tookMs < 3_000, `close() took ${tookMs} ms`);
    assert.ok(hook.received.length >= 4, `the receiver was tried (${hook.received.length} sends)`);
    const failed = lines.filter((line) => line.event === "notify.failed");
    for (const line of failed) assert.match(String(line.err), /no answer within 400 ms/);
    const dropped = lines.filter((line) => line.event === "notify.dropped");
    assert.equal(dropped.length, 1, "one line says what the shutdown dropped");
    assert.equal(dropped[0]!.reason, "shutdown");
    const count = Number(dropped[0]!.count);
    assert.ok(count >= 1, "the sends still waiting when the limit passed are dropped");
    assert.deepEqual(dropped[0]!.channels, { webhook: count });
    assert.equal(failed.length + count, tasks.length, "each of the six notifications is counted once");
  });
});
