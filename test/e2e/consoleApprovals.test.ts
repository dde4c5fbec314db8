// E2E in a real browser (Debian's Chromium, playwright-core) on the web console's approvals: the
// example legacy server's `deploy` needs carol's approval. alice's deploy task waits in `working`;
// carol signs in, sees it in Approvals (tool, caller, expiry, the argument digest and no argument
// value) and approves; alice's open console shows her task complete without a reload. A second
// deploy, opened by carol from the link a notification carries (#/approvals/<id>), is denied with
// a reason, and alice's task page shows that reason as the failure. The upstream sees only the
// approved deploy.
// Run: node --import tsx --test test/e2e/consoleApprovals.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { loggableSubject } from "../../src/auth/identity.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { type Browser, openBrowser } from "../support/browser.js";
import { card, signIn } from "../support/consolePage.js";
import { api, baseOf } from "../support/inventory.js";
import { type Stack, startStack } from "../support/stack.js";
import { createTask, waitForTask } from "../support/tasks.js";

let stack: Stack;
let browser: Browser;
let origin: string;
const deployed: string[] = [];

before(async () => {
  stack = await startStack({
    speed: 20,
    config: {
      tasks: { tools: { deploy: "always" } },
      approvals: [{ tools: ["deploy"], approver: { subjects: ["carol"] }, expiresAfterMs: 600_000 }],
    },
  });
  stack.legacy.events.on("deployed", (event: { version: string }) => deployed.push(event.version));
  origin = new URL(stack.url).origin;
  browser = await openBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.close();
});

/** alice's deploy of `version`, once it waits for carol; with the approval as carol's API lists it. */
async function waitingDeploy(version: string): Promise<{ taskId: string; approval: JsonObject }> {
  const created = await createTask(stack.url, "deploy", { service: "web", version }, { token: "alice" });
  const taskId = created.taskId as string;
  await waitForTask(stack.url, taskId, (task) => /waiting for approval/.test(String(task.statusMessage)), { token: "alice" });
  const listed = (await api(baseOf(stack.url), "GET", "/approvals", "carol")).body.approvals as JsonObject[];
  const approval = listed.find((item) => item.taskId === taskId);
  assert.ok(approval, "carol's API lists it");
  return { taskId, approval };
}

const approvalCard = (page: import("playwright-core").Page, approvalId: unknown) => page.locator(`form[data-approval="${approvalId}"]`);

describe("approvals in the web console, in Chromium", () => {
  test("carol sees alice's waiting deploy and approves it; alice's console shows it complete", async () => {
    const { taskId, approval } = await waitingDeploy("7.1.0");
    const alice = await browser.page();
    await signIn(alice, origin, "alice");
    const mine = card(alice, taskId);
    await mine.getByText("waiting for approval by subjects carol").waitFor();
    assert.equal(await mine.getAttribute("data-status"), "working");

    const carol = await browser.page();
    await signIn(carol, origin, "carol");
    await carol.getByRole("link", { name: "Approvals" }).click();
    const pending = approvalCard(carol, approval.approvalId);
    await pending.waitFor();
    const shown = await pending.innerText();
    assert.match(shown, /deploy/);
    assert.ok(shown.includes(loggableSubject({ subject: "alice" }, "demo")), `the caller is named: ${shown}`);
    assert.ok(shown.includes(String(approval.argumentsDigest).slice(0, 16)), "the argument digest is shown");
    assert.equal(await pending.locator(".expires time").getAttribute("datetime"), approval.expiresAt, "the expiry, date and time");
    assert.doesNotMatch(shown, /7\.1\.0/, "no argument value unless audit.arguments shows them");
    assert.equal(deployed.length, 0, "nothing reached the upstream yet");

    await pending.getByRole("button", { name: "Approve" }).click();
    await carol.getByText(/Approved: deploy/).waitFor();
    assert.equal(await pending.count(), 0, "it is no longer pending");
    await alice.locator(`article[data-task="${taskId}"][data-status="completed"]`).waitFor();
    assert.deepEqual(deployed, ["7.1.0"]);
    await alice.close();
    await carol.close();
  });

  test("carol opens a notification's link to a second deploy and denies it with a reason; alice sees the reason", async () => {
    const { taskId, approval } = await waitingDeploy("7.2.0");
    const carol = await browser.page();
    await signIn(carol, origin, "carol");
    await carol.goto(`${origin}/console#/approvals/${encodeURIComponent(String(approval.approvalId))}`);
    const pending = approvalCard(carol, approval.approvalId);
    await pending.waitFor();
    const linked = await pending.evaluate((form: { matches(selector: string): boolean }) => form.matches(".linked"));
    assert.equal(linked, true, "the linked one is marked");
    await pending.getByLabel("Reason (optional)").fill("release freeze until Monday");
    await pending.getByRole("button", { name: "Deny" }).click();
    await carol.getByText(/Denied: deploy/).waitFor();

    const alice = await browser.page();
    await signIn(alice, origin, "alice");
    await alice.goto(`${origin}/console#/tasks/${taskId}`);
    await alice.getByText(/Failed: .*release freeze until Monday/).waitFor();
    const failed = await waitForTask(stack.url, taskId, () => true, { token: "alice" });
    assert.equal(failed.status, "failed");
    assert.deepEqual(deployed, ["7.1.0"], "the denied deploy never reached the upstream");
    assert.deepEqual(browser.problems, [], "no script error and no CSP refusal");
    await alice.close();
    await carol.close();
  });
});
