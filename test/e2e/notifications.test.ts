// E2E: taskgate tells a task's owner. alice's build_report task (the real example legacy server)
// asks, is answered and completes; a webhook receiver in the test checks each delivery's signature
// (HMAC-SHA256 over "<t>.<body>" with the configured secret, a fresh timestamp), its payload (task
// id, status, the question's message, the console link; no answer) and the retries (the first
// delivery is answered 500, the retry 200). A Web Push service endpoint in the test checks the
// VAPID token (verified with jose against the configured public key) and decrypts the aes128gcm
// payload with the subscription's own keys (http_ece, which web-push uses).
// Run: node --import tsx --test test/e2e/notifications.test.ts

import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { importJWK, jwtVerify } from "jose";
import webpush from "web-push";
import type { JsonObject } from "../../src/protocol/wire.js";
import { api, baseOf } from "../support/inventory.js";
import { decryptPush, type Received, type Receiver, startReceiver, subscriptionKeys } from "../support/servers/notifyReceivers.js";
import { type Stack, startStack } from "../support/stack.js";
import { createTask, hasStatus, waitForTask } from "../support/tasks.js";

const SECRET = "webhook-secret-0123456789abcdef";
const VAPID = webpush.generateVAPIDKeys();
const SUBJECT = "mailto:ops@example.com";

function checkSignature(header: string | string[] | undefined, body: Buffer): number {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(header));
  assert.ok(match, `X-Taskgate-Signature ${String(header)}`);
  const t = Number(match[1]);
  assert.ok(Math.abs(Date.now() / 1000 - t) < 60, "a fresh timestamp");
  const expected = createHmac("sha256", SECRET)
    .update(`${t}.${body.toString("utf8")}`)
    .digest("hex");
  assert.equal(match[2], expected, "HMAC-SHA256 of '<t>.<body>'");
  return t;
}

async function checkVapid(authorization: string | undefined, endpoint: string): Promise<void> {
  const match = /^vapid t=([^,]+), k=([A-Za-z0-9_-]+)$/.exec(String(authorization));
  assert.ok(match, `Authorization ${String(authorization)}`);
  assert.equal(match[2], VAPID.publicKey, "k is the configured VAPID public key");
  const raw = Buffer.from(VAPID.publicKey, "base64url");
  const key = await importJWK(
    { kty: "EC", crv: "P-256", x: raw.subarray(1, 33).toString("base64url"), y: raw.subarray(33, 65).toString("base64url") },
    "ES256",
  );
  const { payload } = await jwtVerify(match[1] as string, key, { audience: new URL(endpoint).origin });
  assert.equal(payload.sub, SUBJECT);
  assert.ok((payload.exp ?? 0) > Date.now() / 1000);
}

describe("notifications: signed webhooks with retries, and Web Push", () => {
  let s: Stack;
  let hook: Receiver;
  let push: Receiver;
  const keys = subscriptionKeys();

  before(async () => {
    // The first webhook delivery fails (500); every later one succeeds.
    hook = await startReceiver((n) => (n === 1 ? 500 : 200));
    push = await startReceiver(() => 201, "/push/alice-device");
    s = await startStack({
      speed: 20,
      config: {
        tasks: { policy: "always" },
        inventory: { publicUrl: "https://gw.example.com" },
        notify: {
          webhooks: [{ url: hook.url, secret: SECRET, events: ["input_required", "completed", "failed"] }],
          webPush: { vapidPublicKey: VAPID.publicKey, vapidPrivateKey: VAPID.privateKey, subject: SUBJECT },
          backoffMs: 50,
          attempts: 3,
        },
      },
    });
  });
  after(async () => {
    await s?.close();
    await hook?.close();
    await push?.close();
  });

  test("the VAPID key is published; alice subscribes her browser", async () => {
    const base = baseOf(s.url);
    assert.deepEqual((await api(base, "GET", "/notify/vapid-public-key", "alice")).body, { publicKey: VAPID.publicKey });
    const refused = await api(base, "POST", "/notify/push-subscriptions", "alice", { endpoint: "http://push.example.com/x", keys });
    assert.equal(refused.status, 400, "a push endpoint must be https (http only on loopback)");
    const subscribed = await api(base, "POST", "/notify/push-subscriptions", "alice", {
      endpoint: push.url,
      keys: { p256dh: keys.p256dh, auth: keys.auth },
    });
    assert.equal(subscribed.status, 201, JSON.stringify(subscribed.body));
  });

  test("input_required then completed: signed, retried after a 500, and pushed encrypted", async () => {
    const task = await createTask(s.url, "build_report", { month: "2026-04" }, { token: "alice" });
    const taskId = task.taskId as string;
    await waitForTask(s.url, taskId, hasStatus("input_required"), { token: "alice" });
    // Delivery 1 (500) and its retry (200) carry the same body, each signed with its own timestamp.
    const [first, retry] = await hook.until(2);
    assert.equal(first?.status, 500);
    assert.equal(retry?.status, 200);
    checkSignature(first?.headers["x-taskgate-signature"], first?.body as Buffer);
    checkSignature(retry?.headers["x-taskgate-signature"], retry?.body as Buffer);
    assert.deepEqual(retry?.body, first?.body);
    const asked = JSON.parse((retry?.body as Buffer).toString("utf8")) as JsonObject;
    assert.deepEqual(
      { ...asked, at: typeof asked.at },
      {
        event: "input_required",
        taskId,
        status: "input_required",
        statusMessage: asked.statusMessage,
        message: "Include charts?",
        tool: "build_report",
        consoleUrl: `https://gw.example.com/console#/tasks/${taskId}`,
        at: "string",
      },
    );

    const [pushed] = await push.until(1);
    assert.equal(pushed?.headers["content-encoding"], "aes128gcm");
    await checkVapid(pushed?.headers.authorization, push.url);
    assert.deepEqual(decryptPush(pushed as Received, keys), asked, "the push carries the same payload");

    await api(baseOf(s.url), "POST", `/tasks/${taskId}/input`, "alice", {
      inputResponses: { charts: { action: "accept", content: { charts: true } } },
    });
    const [, , done] = await hook.until(3);
    checkSignature(done?.headers["x-taskgate-signature"], done?.body as Buffer);
    const completed = JSON.parse((done?.body as Buffer).toString("utf8")) as JsonObject;
    assert.equal(completed.event, "completed");
    assert.equal(completed.taskId, taskId);
    assert.equal(completed.message, undefined);
    assert.doesNotMatch((done?.body as Buffer).toString("utf8"), /"charts":true|accept/, "never the answer");
    const [, second] = await push.until(2);
    assert.equal((decryptPush(second as Received, keys) as JsonObject).event, "completed");

    const metrics = await (await fetch(`${baseOf(s.url)}/metrics`)).text();
    assert.match(metrics, /taskgate_notifications_total\{channel="webhook",outcome="retried"\} 1/);
    assert.match(metrics, /taskgate_notifications_total\{channel="webhook",outcome="delivered"\} 2/);
    assert.match(metrics, /taskgate_notifications_total\{channel="webpush",outcome="delivered"\} 2/);
  });
});

describe("notifications: approval_requested to the webhooks that list it and to the approvers' browsers", () => {
  let s: Stack;
  let hook: Receiver;
  let push: Receiver;
  const carolKeys = subscriptionKeys();
  const bobKeys = subscriptionKeys();

  before(async () => {
    hook = await startReceiver(() => 200);
    // One push service for both browsers: every push that arrives is counted, whoever it was for.
    push = await startReceiver(() => 201, "/push");
    s = await startStack({
      speed: 20,
      config: {
        tasks: { tools: { deploy: "always" } },
        approvals: [{ tools: ["deploy"], approver: { subjects: ["carol"] }, expiresAfterMs: 60_000 }],
        audit: { arguments: true },
        inventory: { publicUrl: "https://gw.example.com" },
        notify: {
          webhooks: [{ url: hook.url, secret: SECRET, events: ["approval_requested"] }],
          webPush: { vapidPublicKey: VAPID.publicKey, vapidPrivateKey: VAPID.privateKey, subject: SUBJECT },
        },
      },
    });
  });
  after(async () => {
    await s?.close();
    await hook?.close();
    await push?.close();
  });

  test("alice's deploy waits for carol: the webhook gets it signed, carol's browser gets it, bob's does not", async () => {
    const base = baseOf(s.url);
    for (const [who, keys] of [
      ["carol", carolKeys],
      ["bob", bobKeys],
    ] as const) {
      const subscribed = await api(base, "POST", "/notify/push-subscriptions", who, {
        endpoint: `${push.url}/${who}`,
        keys: { p256dh: keys.p256dh, auth: keys.auth },
      });
      assert.equal(subscribed.status, 201, JSON.stringify(subscribed.body));
    }
    const task = await createTask(s.url, "deploy", { service: "web", version: "9-secret" }, { token: "alice" });
    const taskId = task.taskId as string;
    const [delivered] = await hook.until(1);
    checkSignature(delivered?.headers["x-taskgate-signature"], delivered?.body as Buffer);
    const text = (delivered?.body as Buffer).toString("utf8");
    assert.doesNotMatch(text, /9-secret|"service"|argumentsDigest/, "no argument values (nor their digest)");
    const asked = JSON.parse(text) as JsonObject;
    const pending = (await api(base, "GET", "/approvals", "carol")).body.approvals as JsonObject[];
    assert.equal(pending.length, 1);
    const approvalId = pending[0]?.approvalId as string;
    assert.deepEqual(
      { ...asked, requestedAt: typeof asked.requestedAt, at: typeof asked.at },
      {
        event: "approval_requested",
        approvalId,
        taskId,
        tool: "deploy",
        caller: pending[0]?.caller,
        approver: "subjects carol",
        requestedAt: "string",
        expiresAt: pending[0]?.expiresAt,
        consoleUrl: `https://gw.example.com/console#/approvals/${encodeURIComponent(approvalId)}`,
        at: "string",
      },
    );

    await s.gateway.notificationsSettled();
    assert.equal(hook.received.length, 1, "one webhook delivery per approval");
    assert.equal(push.received.length, 1, "one push: carol's browser, not bob's");
    const [pushed] = push.received;
    await checkVapid(pushed?.headers.authorization, `${push.url}/carol`);
    assert.deepEqual(decryptPush(pushed as Received, carolKeys), asked, "carol's push carries the same payload");
    assert.throws(() => decryptPush(pushed as Received, bobKeys), "it was not encrypted for bob");

    // Deciding it notifies nobody again: the event is the request, once.
    const decided = await api(base, "POST", `/approvals/${encodeURIComponent(approvalId)}`, "carol", { decision: "approve" });
    assert.equal(decided.status, 200, JSON.stringify(decided.body));
    await waitForTask(s.url, taskId, hasStatus("completed"), { token: "alice" });
    await s.gateway.notificationsSettled();
    assert.equal(hook.received.length, 1);
    assert.equal(push.received.length, 1);
  });
});
