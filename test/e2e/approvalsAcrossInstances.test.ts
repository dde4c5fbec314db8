// Pending approvals live where tasks live: two taskgate instances sharing one real Redis (a
// redis-server of the test's own) or one real PostgreSQL database (each skipped, saying why, when
// it cannot run), in front of the real example legacy server. A call that needs carol's approval
// is held on instance a; carol lists it on instance b and approves it there; the call then runs
// on a (the upstream's own events say when it received it). A webhook that lists
// approval_requested (configured on all three instances) gets the request once, from a; carol's
// browser, subscribed to Web Push on b only, is pushed it once too (by a, which wrote the request,
// reading her subscription from the store; decrypted with her keys).
// Run: node --import tsx --test test/e2e/approvalsAcrossInstances.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import webpush from "web-push";
import type { JsonObject } from "../../src/protocol/wire.js";
import { api, baseOf } from "../support/inventory.js";
import { freshDatabase, POSTGRES_SKIP } from "../support/postgres.js";
import { REDIS_SKIP } from "../support/redisServer.js";
import { decryptPush, type Received, type Receiver, startReceiver, subscriptionKeys } from "../support/servers/notifyReceivers.js";
import { type SharedRedisStack, startSharedRedisStack } from "../support/sharedRedisStack.js";
import { createTask, pollTask } from "../support/tasks.js";

for (const backend of ["Redis", "PostgreSQL"] as const) {
  const skip = backend === "PostgreSQL" ? POSTGRES_SKIP : REDIS_SKIP;
  describe(`approvals across instances sharing ${backend}`, skip === undefined ? {} : { skip }, () => suite(backend));
}

function suite(backend: "Redis" | "PostgreSQL"): void {
  let stack: SharedRedisStack;
  let hook: Receiver;
  let push: Receiver;
  const keys = subscriptionKeys();
  const deployed: string[] = [];

  before(async () => {
    hook = await startReceiver(() => 200);
    push = await startReceiver(() => 201, "/push/carol-device");
    const vapid = webpush.generateVAPIDKeys();
    stack = await startSharedRedisStack({
      speed: 20,
      leaseMs: 3_000,
      config: {
        approvals: [{ tools: ["deploy"], approver: { subjects: ["carol"] }, expiresAfterMs: 60_000 }],
        inventory: { publicUrl: "https://tasks.example.com" },
        notify: {
          webhooks: [{ url: hook.url, secret: "webhook-secret-0123456789abcdef", events: ["approval_requested"] }],
          webPush: { vapidPublicKey: vapid.publicKey, vapidPrivateKey: vapid.privateKey, subject: "mailto:ops@example.com" },
        },
      },
      ...(backend === "PostgreSQL" ? { postgresUrl: await freshDatabase() } : {}),
    });
    stack.legacy.events.on("deployed", (event: { version: string }) => deployed.push(event.version));
  });
  after(async () => {
    await stack?.close();
    await hook?.close();
    await push?.close();
  });

  test("held on a, listed and approved on b, run on a", async () => {
    const { a, b } = stack;
    const subscription = { endpoint: push.url, keys: { p256dh: keys.p256dh, auth: keys.auth } };
    const subscribed = await api(baseOf(b.url), "POST", "/notify/push-subscriptions", "carol", subscription);
    assert.equal(subscribed.status, 201, JSON.stringify(subscribed.body));
    const task = await createTask(a.url, "deploy", { service: "api", version: "42" });
    await pollTask(b.url, task.taskId as string, (t) => /waiting for approval/.test(String(t.statusMessage)));
    assert.deepEqual(deployed, []);
    const root = b.url.slice(0, -"/mcp".length);
    const listed = await fetch(`${root}/approvals`, { headers: { Authorization: "Bearer carol" } });
    const { approvals } = (await listed.json()) as { approvals: Array<JsonObject & { approvalId: string }> };
    const pending = approvals.find((item) => item.taskId === task.taskId);
    assert.ok(pending, JSON.stringify(approvals));
    const decided = await fetch(`${root}/approvals/${pending.approvalId}`, {
      method: "POST",
      headers: { Authorization: "Bearer carol", "Content-Type": "application/json" },
      body: JSON.stringify({ decision: "approve" }),
    });
    assert.equal(decided.status, 200);
    const done = await pollTask(a.url, task.taskId as string, (t) => t.status !== "working", { timeoutMs: 10_000 });
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.deepEqual(deployed, ["42"]);
    await Promise.all([a, b, stack.c].map((gateway) => gateway.notificationsSettled()));
    const events = hook.received.map((delivery) => JSON.parse(delivery.body.toString("utf8")) as JsonObject);
    assert.deepEqual(
      events.map((event) => [event.event, event.approvalId]),
      [["approval_requested", pending.approvalId]],
      "notified once, by the instance holding the call",
    );
    const [pushed] = await push.until(1);
    assert.deepEqual(decryptPush(pushed as Received, keys), events[0], "carol's browser, subscribed on b, is pushed the request");
    await assert.rejects(push.until(2, 1_000), "pushed once: a second push would be a duplicate");
  });
}
