// E2E on a real Redis: three taskgate instances share the store (sharedRedisStack). alice's task is
// held by instance a; on instance b she follows it (the events stream gets a's changes through the
// task bus, without polling), answers it (delivered through the holder link to a) and sees it
// complete; the operator on c fails another of a's tasks with a reason. Every instance has the same
// webhook configured, and each event reaches the receiver exactly once (from the instance that made
// the change). The summary lists the live instances from the leases.
// Run: node --import tsx --test test/e2e/inventoryAcrossInstances.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import webpush from "web-push";
import type { JsonObject } from "../../src/protocol/wire.js";
import { api, baseOf, nextMatching, openEvents } from "../support/inventory.js";
import { decryptPush, type Receiver, startReceiver, subscriptionKeys } from "../support/servers/notifyReceivers.js";
import { type SharedRedisStack, startSharedRedisStack } from "../support/sharedRedisStack.js";
import { createTask, hasStatus, waitForTask } from "../support/tasks.js";

const SECRET = "webhook-secret-0123456789abcdef";
const VAPID = webpush.generateVAPIDKeys();

describe("the inventory across instances on Redis", () => {
  let stack: SharedRedisStack;
  let hook: Receiver;
  let push: Receiver;
  const keys = subscriptionKeys();

  before(async () => {
    hook = await startReceiver(() => 200);
    push = await startReceiver(() => 201, "/push/alice-device");
    stack = await startSharedRedisStack({
      speed: 20,
      leaseMs: 5_000,
      config: {
        tasks: { policy: "always" },
        // One console address for all: the payloads are the same whichever instance sends them.
        inventory: { operators: { subjects: ["ops"] }, publicUrl: "https://tasks.example.com" },
        notify: {
          webhooks: [{ url: hook.url, secret: SECRET, events: ["input_required", "completed", "failed"] }],
          webPush: { vapidPublicKey: VAPID.publicKey, vapidPrivateKey: VAPID.privateKey, subject: "mailto:ops@example.com" },
        },
      },
    });
  });
  after(async () => {
    await stack?.close();
    await hook?.close();
    await push?.close();
  });

  test("followed and answered on b, held by a; failed by the operator on c; each event notified once", async () => {
    const [a, b, c] = [baseOf(stack.a.url), baseOf(stack.b.url), baseOf(stack.c.url)];
    const subscription = { endpoint: push.url, keys: { p256dh: keys.p256dh, auth: keys.auth } };
    const subscribed = await api(a, "POST", "/notify/push-subscriptions", "alice", subscription);
    assert.equal(subscribed.status, 201, JSON.stringify(subscribed.body));
    const report = await createTask(stack.a.url, "build_report", { month: "2026-05" }, { token: "alice" });
    const stuck = await createTask(stack.b.url, "build_report", { month: "2026-06" }, { token: "alice" });
    const id = report.taskId as string;
    await waitForTask(stack.a.url, id, hasStatus("input_required"), { token: "alice" });
    await waitForTask(stack.b.url, stuck.taskId as string, hasStatus("input_required"), { token: "alice" });
    assert.deepEqual(
      ((await api(c, "GET", "/tasks", "alice")).body.tasks as JsonObject[]).map((task) => task.taskId),
      [stuck.taskId, id],
      "any instance lists her tasks",
    );

    const events = await openEvents(b, `/tasks/${id}/events`, "alice");
    assert.equal((await events.next()).status, "input_required");
    const answered = await api(b, "POST", `/tasks/${id}/input`, "alice", {
      inputResponses: { charts: { action: "accept", content: { charts: false } } },
    });
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    await nextMatching(events, (frame) => frame.status === "completed");
    await events.ended;

    const failed = await api(c, "POST", `/admin/tasks/${stuck.taskId as string}/fail`, "ops", { reason: "stuck" });
    assert.equal(failed.status, 200, JSON.stringify(failed.body));
    assert.equal(failed.body.status, "failed");
    assert.equal(failed.body.holder === undefined, false);

    // input_required ×2, completed, failed: four events, each delivered once although three instances are configured.
    const deliveries = await hook.until(4);
    const seen = deliveries
      .map((d) => JSON.parse(d.body.toString("utf8")) as JsonObject)
      .map((n) => `${n.taskId as string}:${n.event as string}`);
    assert.deepEqual(
      [...seen].sort(),
      [`${id}:input_required`, `${id}:completed`, `${stuck.taskId as string}:input_required`, `${stuck.taskId as string}:failed`].sort(),
    );
    // Her browser, subscribed on a only: the same four events, each pushed once by the instance that made it, decrypted with its keys.
    const pushes = (await push.until(4)).map((received) => decryptPush(received, keys) as JsonObject);
    const byEvent = (n: JsonObject) => `${n.taskId as string}:${n.event as string}`;
    const hooked = new Map(deliveries.map((d) => JSON.parse(d.body.toString("utf8")) as JsonObject).map((n) => [byEvent(n), n]));
    assert.deepEqual(pushes.map(byEvent).sort(), [...seen].sort(), "each event pushed once, made on a or on b");
    for (const pushed of pushes) assert.deepEqual(pushed, hooked.get(byEvent(pushed)), "the push carries the webhook's payload");
    const summary = await api(a, "GET", "/admin/summary", "ops");
    const instances = summary.body.instances as JsonObject[];
    assert.equal(instances.length, 3, JSON.stringify(instances));
    assert.equal(instances.filter((instance) => instance.self).length, 1);
    // Nothing more arrives: a fifth delivery would be a duplicate.
    await assert.rejects(hook.until(5, 1_000));
    assert.equal(push.received.length, 4, "no push twice (only the writer of a change pushes it)");
  });
});
