// E2E in a real browser: the console's Web Push offer. With notify.webPush configured, a signed-in
// person sees "Notify me on this device"; clicking it (notifications allowed) registers the
// console's service worker (/console/sw.js, served like every console file) and asks the browser's
// push service for a subscription. No push service is reachable from the tests (only loopback), so
// the page must say the outcome (subscribed, or which step the push service did not finish); delivering pushes to a
// subscription is tested without a browser in notifications.test.ts. Without webPush, no offer.
// Run: node --import tsx --test test/e2e/consolePush.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import webpush from "web-push";
import { type Browser, openBrowser } from "../support/browser.js";
import { type Stack, startStack } from "../support/stack.js";

const VAPID = webpush.generateVAPIDKeys();

let withPush: Stack;
let withoutPush: Stack;
let browser: Browser;

before(async () => {
  withPush = await startStack({
    config: {
      notify: { webPush: { vapidPublicKey: VAPID.publicKey, vapidPrivateKey: VAPID.privateKey, subject: "mailto:ops@example.com" } },
    },
  });
  withoutPush = await startStack();
  browser = await openBrowser();
});
after(async () => {
  await browser?.close();
  await withPush?.close();
  await withoutPush?.close();
});

async function signedIn(stack: Stack) {
  const origin = new URL(stack.url).origin;
  await browser.context.grantPermissions(["notifications"], { origin });
  const page = await browser.page();
  await page.goto(`${origin}/console`);
  await page.getByLabel("Bearer token").fill("alice");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.locator("#who", { hasText: "alice" }).waitFor();
  await page.getByRole("heading", { name: "My tasks" }).waitFor();
  return { page, origin };
}

describe("console Web Push offer in Chromium", () => {
  test("with Web Push on: the offer, the service worker registered, the outcome said", async () => {
    const { page, origin } = await signedIn(withPush);
    const offer = page.getByRole("button", { name: "Notify me on this device" });
    await offer.click();
    const said = page.locator(".push .form-status");
    await said.filter({ hasText: /^(This device will be told|Not subscribed: )/ }).waitFor({ timeout: 40_000 });
    const outcome = await said.innerText();
    // Subscribed, or refused by the push service the tests cannot reach: either way the page says which, with the step.
    assert.match(outcome, /^(This device will be told|Not subscribed: .*push service)/);
    const scope = await page.evaluate("navigator.serviceWorker.getRegistration('console/').then((r) => r && r.scope)");
    assert.equal(scope, `${origin}/console/`);
    const worker = await fetch(`${origin}/console/sw.js`);
    assert.equal(worker.headers.get("content-type"), "text/javascript; charset=utf-8");
    assert.match(worker.headers.get("content-security-policy") ?? "", /script-src 'self'/);
    await page.close();
  });

  test("without Web Push: no offer", async () => {
    const { page } = await signedIn(withoutPush);
    await page.getByText("No tasks yet.").waitFor();
    assert.equal(await page.getByRole("button", { name: "Notify me on this device" }).count(), 0);
    await page.close();
  });
});
