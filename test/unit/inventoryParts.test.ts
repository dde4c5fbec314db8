// Unit: the operator role (subjects, scopes, JWT claims incl. array claims), the notification
// payload (no answer, the question's message, the console link) and the delivery queue's bounds
// (a full queue drops and counts; a permanent failure is not retried; attempts are bounded). A
// change on the task bus says what it changed from (so every instance can push it); the store never
// keeps that.
// Run: node --import tsx --test test/unit/inventoryParts.test.ts

import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { describe, it } from "node:test";
import { InProcessTaskBus } from "../../src/cluster/taskBus.js";
import { InventorySchema } from "../../src/config/inventoryOptions.js";
import { isOperator } from "../../src/inventory/operatorRole.js";
import { DeliveryQueue, PermanentFailure } from "../../src/notify/deliveryQueue.js";
import { eventOf, notificationOf } from "../../src/notify/notification.js";
import { NotifyMetrics } from "../../src/notify/notifyMetrics.js";
import { signature } from "../../src/notify/webhooks.js";
import { createLogger } from "../../src/observability/logger.js";
import { createTaskStore } from "../../src/tasks/stores/createTaskStore.js";
import type { TaskRecord } from "../../src/tasks/taskRecord.js";
import { TaskRecords } from "../../src/tasks/taskRecords.js";

const operators = InventorySchema.parse({
  operators: { subjects: ["root"], scopes: ["ops"], claims: { role: ["admin"], level: [3] } },
}).operators;

describe("operator role", () => {
  it("a listed subject, a listed scope, or a claim holding a listed value (array claims: any item)", () => {
    assert.equal(isOperator({ subject: "root" }, operators), true);
    assert.equal(isOperator({ subject: "a", scopes: ["read", "ops"] }, operators), true);
    assert.equal(isOperator({ subject: "a", claims: { role: "admin" } }, operators), true);
    assert.equal(isOperator({ subject: "a", claims: { role: ["user", "admin"] } }, operators), true);
    assert.equal(isOperator({ subject: "a", claims: { level: 3 } }, operators), true);
    assert.equal(isOperator({ subject: "a", claims: { level: "3", role: "user" }, scopes: ["read"] }, operators), false);
    assert.equal(isOperator({ subject: "root" }, InventorySchema.parse({}).operators), false, "nobody unless configured");
  });
});

const waiting: TaskRecord = {
  taskId: "t1",
  status: "input_required",
  statusMessage: "Running tests",
  createdAt: "2026-12-02T00:00:00.000Z",
  lastUpdatedAt: "2026-12-02T00:01:00.000Z",
  ttlMs: 1000,
  inputRequests: {
    deploy: { method: "elicitation/create", params: { mode: "form", message: "Deploy anyway?", requestedSchema: { type: "object" } } },
  },
  result: { secret: "never" },
  ownerHash: "h",
  tool: "run_suite",
  holder: "i",
  version: 3,
};

describe("notification payload", () => {
  it("a write tells this instance's transitions once, with the record it changed from (notifications are sent from there)", async () => {
    const store = await createTaskStore({ kind: "memory" });
    const bus = new InProcessTaskBus<TaskRecord>();
    const told: Array<[string, string]> = [];
    const records = new TaskRecords(store, bus, undefined, [(record, before) => told.push([before.status, record.status])]);
    const { inputRequests: _none, ...working } = waiting;
    const at = new Date().toISOString();
    await records.create({ ...working, status: "working", createdAt: at, lastUpdatedAt: at, ttlMs: null });
    await records.write("t1", (current) => ({ ...current, status: "completed", result: {} }));
    await records.write("t1", (current) => ({ ...current, statusMessage: "after the end" }));
    assert.deepEqual(told, [["working", "completed"]], "a finished task is not written again");
    const record = await records.get("t1");
    assert.equal(eventOf(record as TaskRecord, told[0]?.[0] as TaskRecord["status"]), "completed");
  });

  it("names the event, the question's message and the console link; nothing else of the task", () => {
    assert.equal(eventOf(waiting, "working"), "input_required");
    assert.equal(eventOf(waiting, "input_required"), undefined, "no change of status, no event");
    assert.equal(eventOf({ ...waiting, status: "cancelled" }, "working"), undefined, "cancelled is not notified");
    assert.deepEqual(notificationOf(waiting, "input_required", "https://gw.example.com/"), {
      event: "input_required",
      taskId: "t1",
      status: "input_required",
      statusMessage: "Running tests",
      message: "Deploy anyway?",
      tool: "run_suite",
      consoleUrl: "https://gw.example.com/console#/tasks/t1",
      at: "2026-12-02T00:01:00.000Z",
    });
  });

  it("the signature is HMAC-SHA256 over '<t>.<body>'", () => {
    assert.equal(signature("{}", "k", 1), `t=1,v1=${createHmac("sha256", "k").update("1.{}").digest("hex")}`);
    assert.match(signature("{}", "k", 1), /^t=1,v1=[0-9a-f]{64}$/);
    assert.notEqual(signature("{}", "k", 1), signature("{}", "k", 2));
  });
});

describe("delivery queue", () => {
  const limits = { timeoutMs: 1000, attempts: 3, backoffMs: 1, maxBackoffMs: 4, queueSize: 2 };
  const log = createLogger("silent");

  it("over queueSize drops and counts; retries until attempts; a permanent failure is tried once", async () => {
    const metrics = new NotifyMetrics();
    const queue = new DeliveryQueue(limits, metrics, log);
    let flaky = 0;
    let permanent = 0;
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const base = { channel: "webhook" as const, target: "t", taskId: "x", event: "completed" };
    queue.push({
      ...base,
      send: async () => {
        flaky++;
      },
    });
    queue.push({ ...base, send: () => held });
    queue.push({ ...base, send: async () => undefined }); // the third: the queue is full
    release();
    await queue.settled();
    queue.push({
      ...base,
      send: async () => {
        flaky++;
        throw new Error("HTTP 500");
      },
    });
    queue.push({
      ...base,
      send: async () => {
        permanent++;
        throw new PermanentFailure("HTTP 400");
      },
    });
    await queue.settled();
    assert.equal(flaky, 1 + limits.attempts);
    assert.equal(permanent, 1);
    const text = await metrics.registry.metrics();
    assert.match(text, /channel="webhook",outcome="dropped"\} 1/);
    assert.match(text, /channel="webhook",outcome="delivered"\} 2/);
    assert.match(text, /channel="webhook",outcome="retried"\} 2/);
    assert.match(text, /channel="webhook",outcome="failed"\} 2/);
    queue.close();
  });
});
