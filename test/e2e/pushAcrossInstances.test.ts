// E2E on a real Redis (sharedRedisStack, the test file's own redis-server): Web Push subscriptions
// live in the task store, and the instance that writes a change pushes it. alice subscribes her
// laptop on instance a and her phone on b; a is stopped (a restart's first half) and a new
// instance d starts on the same store. Her task on d asks a question: d pushes it to both, once.
// The phone's push service answers 410, so the phone is gone from the store. She answers through
// c; d (the holder) writes the completion and pushes it to the laptop only. Her task held by b
// asks again: b pushes it, once. She unsubscribes the laptop on c: the next change is pushed to
// nobody. Every push is decrypted with the browser's keys.
// Run: node --import tsx --test test/e2e/pushAcrossInstances.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import webpush from "web-push";
import { ownerHashOf } from "../../src/auth/identity.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { createTaskStore } from "../../src/tasks/stores/createTaskStore.js";
import type { TaskStore } from "../../src/tasks/taskStore.js";
import { api, baseOf } from "../support/inventory.js";
import { testRedisUrl } from "../support/redisServer.js";
import { decryptPush, type Receiver, startReceiver, subscriptionKeys } from "../support/servers/notifyReceivers.js";
import { type SharedRedisStack, startSharedRedisStack } from "../support/sharedRedisStack.js";
import { connectTo } from "../support/taskStores.js";
import { createTask, hasStatus, waitForTask } from "../support/tasks.js";

const VAPID = webpush.generateVAPIDKeys();
const ALICE = ownerHashOf({ subject: "alice" });
const CHARTS = { inputResponses: { charts: { action: "accept", content: { charts: false } } } };

describe("Web Push subscriptions in the task store, across instances and restarts", () => {
  let stack: SharedRedisStack;
  let laptop: Receiver;
  let phone: Receiver;
  let store: TaskStore;
  const laptopKeys = subscriptionKeys();
  const phoneKeys = subscriptionKeys();

  before(async () => {
    laptop = await startReceiver(() => 201, "/push/alice-laptop");
    phone = await startReceiver(() => 410, "/push/alice-phone");
    stack = await startSharedRedisStack({
      speed: 20,
      leaseMs: 5_000,
      config: {
        tasks: { policy: "always" },
        inventory: { publicUrl: "https://tasks.example.com" },
        notify: { webPush: { vapidPublicKey: VAPID.publicKey, vapidPrivateKey: VAPID.privateKey, subject: "mailto:ops@example.com" } },
      },
    });
    const url = await testRedisUrl();
    store = await createTaskStore({ kind: "redis", connect: connectTo(url), label: url, prefix: stack.prefix, instanceId: "reader" });
  });
  after(async () => {
    await store?.close();
    await stack?.close();
    await laptop?.close();
    await phone?.close();
  });

  test("kept over a restart, pushed once by the instance that writes the change, gone after 410 and after unsubscribing", async () => {
    const subscribe = async (mcpUrl: string, receiver: Receiver, keys: { p256dh: string; auth: string }) => {
      const body = { endpoint: receiver.url, keys: { p256dh: keys.p256dh, auth: keys.auth } };
      const subscribed = await api(baseOf(mcpUrl), "POST", "/notify/push-subscriptions", "alice", body);
      assert.equal(subscribed.status, 201, JSON.stringify(subscribed.body));
    };
    await subscribe(stack.a.url, laptop, laptopKeys);
    await subscribe(stack.b.url, phone, phoneKeys);
    assert.deepEqual(
      (await store.push.of(ALICE))?.subscriptions.map((s) => s.endpoint),
      [laptop.url, phone.url],
    );

    await stack.stop(stack.a); // the instance that took the laptop's subscription is gone
    const d = await stack.another();
    const onD = (await createTask(d.url, "build_report", { month: "2026-05" }, { token: "alice" })).taskId as string;
    await waitForTask(d.url, onD, hasStatus("input_required"), { token: "alice" });
    const [asked] = await laptop.until(1);
    assert.deepEqual(
      pick(decryptPush(asked!, laptopKeys) as JsonObject),
      { event: "input_required", taskId: onD, status: "input_required" },
      "pushed by d to a subscription a took",
    );
    const [refused] = await phone.until(1);
    assert.equal((decryptPush(refused!, phoneKeys) as JsonObject).taskId, onD);
    await d.notificationsSettled();
    assert.deepEqual(
      (await store.push.of(ALICE))?.subscriptions.map((s) => s.endpoint),
      [laptop.url],
      "the push service's 410 removed the phone",
    );

    const c = baseOf(stack.c.url);
    const answered = await api(c, "POST", `/tasks/${onD}/input`, "alice", CHARTS);
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    await waitForTask(d.url, onD, hasStatus("completed"), { token: "alice" });
    const onB = (await createTask(stack.b.url, "build_report", { month: "2026-06" }, { token: "alice" })).taskId as string;
    await waitForTask(stack.b.url, onB, hasStatus("input_required"), { token: "alice" });
    const pushed = (await laptop.until(3)).map((push) => pick(decryptPush(push, laptopKeys) as JsonObject));
    assert.deepEqual(pushed.slice(1), [
      { event: "completed", taskId: onD, status: "completed" },
      { event: "input_required", taskId: onB, status: "input_required" },
    ]);

    const gone = await api(c, "DELETE", "/notify/push-subscriptions", "alice", { endpoint: laptop.url });
    assert.equal(gone.status, 204);
    assert.equal(await store.push.of(ALICE), undefined, "unsubscribed on c: gone for every instance");
    assert.equal((await api(c, "POST", `/tasks/${onB}/input`, "alice", CHARTS)).status, 200);
    await waitForTask(stack.b.url, onB, hasStatus("completed"), { token: "alice" });
    for (const gateway of [stack.b, stack.c, d]) await gateway.notificationsSettled();
    assert.equal(laptop.received.length, 3, "each change pushed once, none after unsubscribing");
    assert.equal(phone.received.length, 1, "nothing more to the phone after its 410");
  });

  test("a subscription the store cannot keep is a 503 naming the store; a bad one a 400", async () => {
    const b = baseOf(stack.b.url);
    const bad = await api(b, "POST", "/notify/push-subscriptions", "alice", { endpoint: "ftp://push.example.com/x", keys: {} });
    assert.equal(bad.status, 400);
    assert.match(String((bad.body.error as JsonObject).message), /endpoint must be https/);
    const keys = subscriptionKeys();
    // The owners' set made a string: the store refuses the write, and says so.
    const url = await testRedisUrl();
    const raw = await connectTo(url)();
    try {
      await raw.set(`${stack.prefix}:push:owners`, "not a set");
      const body = { endpoint: "https://push.example.com/send/bob", keys: { p256dh: keys.p256dh, auth: keys.auth } };
      const refused = await api(b, "POST", "/notify/push-subscriptions", "bob", body);
      assert.equal(refused.status, 503, JSON.stringify(refused.body));
      assert.match(String((refused.body.error as JsonObject).message), /task store \(redis .*WRONGTYPE/);
    } finally {
      await raw.del(`${stack.prefix}:push:owners`);
      await raw.close();
    }
  });
});

const pick = (push: JsonObject) => ({ event: push.event, taskId: push.taskId, status: push.status });
