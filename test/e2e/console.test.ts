// E2E in a real browser: Debian's Chromium headless (playwright-core, test/support/browser.ts) on the web console
// of a real taskgate in front of the real example legacy server, both in-process on loopback ports;
// tasks are started by MCP clients over real HTTP, as in use. Alice signs in with her token, sees
// her waiting task with its question, fills the generated form and sees the task complete without
// a reload; a wrong value is refused next to its field, by the page and (for a tampered page) by
// taskgate; sampling and roots questions are answered too; a task's page shows its timeline and
// cancels it; Bob sees none of Alice's tasks; the operator sees both, cancels one and fails one; the page and
// its assets carry the CSP and frame headers, and the page runs under that CSP without a refusal;
// a phone-sized window shows the same task. Screenshots for docs/ are taken when SCREENSHOTS=1.
// Run: node --import tsx --test test/e2e/console.test.ts

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Page } from "playwright-core";
import { loggableSubject } from "../../src/auth/identity.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { type Browser, openBrowser } from "../support/browser.js";
import { card, signIn as signInAt } from "../support/consolePage.js";
import { TASKS_CAPS } from "../support/mcpClient.js";
import { REPO } from "../support/repoRoot.js";
import { type Stack, startStack } from "../support/stack.js";
import { textOf } from "../support/taskShapes.js";
import { createTask, hasStatus, waitForTask } from "../support/tasks.js";

let stack: Stack;
let browser: Browser;
let origin: string;

before(async () => {
  stack = await startStack({
    speed: 20,
    config: {
      tasks: { tools: { plan_release: "always", run_suite: "always", two_rounds: "always", ask_sampling: "always", list_roots: "always" } },
      inventory: { operators: { subjects: ["ops"] } },
    },
  });
  origin = new URL(stack.url).origin;
  browser = await openBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.close();
});

/** Starts `tool` as `who`'s task and waits until it asks its question; returns the task id. */
async function waitingTask(tool: string, who: string, args: JsonObject = {}, capabilities?: JsonObject): Promise<string> {
  const created = await createTask(stack.url, tool, args, { token: who, ...(capabilities ? { capabilities } : {}) });
  const taskId = created.taskId as string;
  await waitForTask(stack.url, taskId, (task) => task.status === "input_required", { token: who });
  return taskId;
}

const signIn = (page: Page, token: string) => signInAt(page, origin, token);
const fieldError = (page: Page, taskId: string, key: string) => card(page, taskId).locator(`.field[data-field="${key}"] .error`);

/** Marks the document, so a test can tell it was never reloaded. */
const mark = (page: Page) =>
  page
    .locator("html")
    .evaluate((html: { setAttribute(name: string, value: string): void }) => html.setAttribute("data-not-reloaded", "yes"));
const stillMarked = async (page: Page) => (await page.locator("html").getAttribute("data-not-reloaded")) === "yes";

async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.SCREENSHOTS === "1") await page.screenshot({ path: join(REPO, "docs", "images", name), fullPage: true });
}

describe("web console in Chromium", () => {
  test("alice signs in, sees her waiting task with its question, answers the form and sees it complete without a reload", async () => {
    const taskId = await waitingTask("plan_release", "alice");
    const page = await browser.page();
    await signIn(page, "alice");
    const mine = card(page, taskId);
    await mine.getByText("Release settings?").waitFor();
    assert.equal(await mine.getAttribute("data-status"), "input_required");
    assert.ok(
      await page
        .locator("section", { has: page.getByRole("heading", { name: "Waiting for you" }) })
        .locator(`[data-task="${taskId}"]`)
        .count(),
    );
    // Every field has a visible label from its title or description; defaults are filled in.
    for (const label of ["Version", "Contact email", "Environment", "Canary percent", "Error budget", "Machine size", "Notify the team"])
      assert.ok(await mine.getByLabel(label).isVisible(), `a visible field labelled ${label}`);
    assert.equal(await mine.getByLabel("Canary percent").inputValue(), "10");
    assert.equal(await mine.getByLabel("Notify the team").isChecked(), true);
    assert.equal(await mine.getByRole("group", { name: "Regions" }).getByLabel("eu").isChecked(), true);
    await screenshot(page, "console-laptop.png");
    await mark(page);
    await mine.getByLabel("Version").fill("1.4.0");
    await mine.getByLabel("Environment").selectOption({ label: "Production" });
    await mine.getByRole("group", { name: "Regions" }).getByLabel("us").check();
    await mine.getByRole("button", { name: "Send answer" }).click();
    await page.locator(`article[data-task="${taskId}"][data-status="completed"]`).waitFor();
    assert.ok(await stillMarked(page), "the page was not reloaded");
    const done = await waitForTask(stack.url, taskId, hasStatus("completed"), { token: "alice" });
    const text = textOf(done.result);
    assert.match(text, /"environment":"production"/);
    assert.match(text, /"regions":\["eu","us"\]/);
    assert.match(text, /"canary":10/);
    await page.close();
  });

  test("a wrong value is refused next to its field: by the page before sending, and by taskgate for a tampered page", async () => {
    const taskId = await waitingTask("plan_release", "alice");
    const page = await browser.page(390);
    const posts: string[] = [];
    page.on("request", (request) => {
      if (request.method() === "POST") posts.push(new URL(request.url()).pathname);
    });
    await signIn(page, "alice");
    const mine = card(page, taskId);
    await mine.getByText("Release settings?").waitFor();
    await screenshot(page, "console-phone.png");
    await mine.getByLabel("Version").fill("1.4");
    await mine.getByLabel("Canary percent").fill("500");
    await mine.getByLabel("Environment").selectOption({ label: "Staging" });
    await mine.getByRole("button", { name: "Send answer" }).click();
    await fieldError(page, taskId, "version").getByText("At least 5 characters.").waitFor();
    await fieldError(page, taskId, "canary").getByText("At most 100.").waitFor();
    assert.equal(await mine.getByLabel("Version").getAttribute("aria-invalid"), "true");
    assert.deepEqual(posts, [], "nothing was sent");
    await screenshot(page, "console-phone-refused.png");
    // A page tampered with (an option that is not in the schema): taskgate's own check refuses it, shown at that field.
    await mine.getByLabel("Version").fill("1.4.0");
    await mine.getByLabel("Canary percent").fill("50");
    await mine.getByLabel("Environment").evaluate((select: { selectedOptions: ArrayLike<{ value: string }> }) => {
      (select.selectedOptions[0] as { value: string }).value = "moon";
    });
    await mine.getByRole("button", { name: "Send answer" }).click();
    await fieldError(page, taskId, "environment")
      .getByText(/environment/)
      .waitFor();
    assert.deepEqual(posts, [`/tasks/${taskId}/input`]);
    assert.equal(await fieldError(page, taskId, "version").isVisible(), false, "the fixed field's message is gone");
    const still = await waitForTask(stack.url, taskId, () => true, { token: "alice" });
    assert.equal(still.status, "input_required", "the question stays open");
    await mine.getByLabel("Environment").selectOption({ label: "Production" });
    await mine.getByRole("button", { name: "Send answer" }).click();
    await page.locator(`article[data-task="${taskId}"][data-status="completed"]`).waitFor();
    await page.close();
  });

  test("a sampling question shows the conversation and takes a reply; a roots question takes folders", async () => {
    const sampling = await waitingTask("ask_sampling", "alice", { prompt: "What is six times seven?" }, { ...TASKS_CAPS, sampling: {} });
    const roots = await waitingTask("list_roots", "alice", {}, { ...TASKS_CAPS, roots: {} });
    const page = await browser.page();
    await signIn(page, "alice");
    const asked = card(page, sampling);
    await asked.getByText("The tool asks for a model's reply").waitFor();
    await asked.locator(".conversation").getByText("What is six times seven?").waitFor();
    await asked.getByLabel(/^Your reply/).fill("42");
    await asked.getByRole("button", { name: "Send answer" }).click();
    await page.locator(`article[data-task="${sampling}"][data-status="completed"]`).waitFor();
    assert.equal(textOf((await waitForTask(stack.url, sampling, hasStatus("completed"), { token: "alice" })).result), "Model said: 42");
    const folders = card(page, roots);
    await folders.getByLabel(/^Folders/).fill("file:///work/project\nfile:///work/docs");
    await folders.getByRole("button", { name: "Send answer" }).click();
    await page.locator(`article[data-task="${roots}"][data-status="completed"]`).waitFor();
    const listed = textOf((await waitForTask(stack.url, roots, hasStatus("completed"), { token: "alice" })).result);
    assert.equal(listed, "Roots: file:///work/project, file:///work/docs");
    await page.close();
  });

  test("a task's page: the timeline of its states, live, and cancel", async () => {
    const taskId = await waitingTask("two_rounds", "alice");
    const page = await browser.page();
    await signIn(page, "alice");
    await card(page, taskId).getByRole("link", { name: "two_rounds" }).click();
    const timeline = page.getByRole("list", { name: "Timeline" });
    await timeline.locator('li[data-status="input_required"]').waitFor();
    assert.equal(await timeline.locator("li").first().getAttribute("data-status"), "working");
    await page.getByRole("button", { name: "Cancel task" }).click();
    await timeline.locator('li[data-status="cancelled"]').waitFor();
    await page.getByText("Cancelled.").waitFor();
    assert.equal(await page.getByRole("button", { name: "Cancel task" }).isVisible(), false);
    assert.equal((await waitForTask(stack.url, taskId, () => true, { token: "alice" })).status, "cancelled");
    await page.close();
  });

  test("bob sees none of alice's tasks, not even by its link", async () => {
    const alices = await waitingTask("two_rounds", "alice");
    const bobs = await waitingTask("two_rounds", "bob");
    const page = await browser.page();
    await signIn(page, "bob");
    await card(page, bobs).waitFor();
    assert.equal(await card(page, alices).count(), 0);
    assert.equal(await page.locator("article[data-task]").count(), 1, "only bob's own task");
    assert.equal(await page.getByRole("link", { name: "Operator" }).isVisible(), false, "bob is no operator");
    await page.goto(`${origin}/console#/tasks/${alices}`);
    await page.getByText("No such task (or not yours).").waitFor();
    await page.close();
  });

  test("the operator sees both owners' tasks, cancels one and fails the other with a reason", async () => {
    const alices = await waitingTask("run_suite", "alice");
    const bobs = await waitingTask("run_suite", "bob");
    const page = await browser.page();
    await signIn(page, "ops");
    await page.getByRole("link", { name: "Operator" }).click();
    const row = (taskId: string) => page.locator(`table.tasks tr[data-task="${taskId}"]`);
    await row(alices).waitFor();
    await row(bobs).waitFor();
    // Owners as the inventory shows them: in demo mode the subject is the token, so a hash of it.
    assert.ok((await row(alices).innerText()).includes(loggableSubject({ subject: "alice" }, "demo")));
    assert.ok((await row(bobs).innerText()).includes(loggableSubject({ subject: "bob" }, "demo")));
    await page.locator(`ol.waiting li[data-task="${alices}"]`).getByText("3 flaky tests failed. Deploy anyway?").waitFor();
    assert.ok(await page.locator("figure.chart svg polyline").count(), "the chart has its lines");
    await screenshot(page, "console-operator.png");
    await row(bobs).getByRole("button", { name: "Cancel" }).click();
    await row(bobs).getByText("cancelled").waitFor();
    assert.equal((await waitForTask(stack.url, bobs, () => true, { token: "bob" })).status, "cancelled");
    assert.equal(
      (await waitForTask(stack.url, alices, () => true, { token: "alice" })).status,
      "input_required",
      "alice's task is untouched",
    );
    // Fail… asks for the reason the caller will see.
    page.once("dialog", (dialog) => dialog.accept("stuck on a deploy lock"));
    await row(alices).getByRole("button", { name: "Fail…" }).click();
    await row(alices).getByText("failed").waitFor();
    const failed = await waitForTask(stack.url, alices, () => true, { token: "alice" });
    assert.equal(failed.status, "failed");
    assert.match(String(failed.statusMessage), /stuck on a deploy lock/);
    await page.close();
  });

  test("the page and its assets carry the CSP and frame headers; the page runs under them; it cannot be framed", async () => {
    for (const path of [
      "/console",
      "/console/app.js",
      "/console/console.css",
      "/console/vendor/eventsource-parser.js",
      "/console/settings.json",
    ]) {
      const response = await fetch(`${origin}${path}`);
      assert.equal(response.status, 200, path);
      const csp = response.headers.get("content-security-policy") ?? "";
      assert.match(csp, /default-src 'none'/, path);
      assert.match(csp, /script-src 'self'(;|$)/, path);
      assert.match(csp, /style-src 'self'(;|$)/, path);
      assert.match(csp, /connect-src 'self'(;|$)/, path);
      assert.match(csp, /frame-ancestors 'none'/, path);
      assert.equal(response.headers.get("x-frame-options"), "DENY", path);
      assert.equal(response.headers.get("x-content-type-options"), "nosniff", path);
      assert.equal(response.headers.get("set-cookie"), null, path);
    }
    assert.equal((await fetch(`${origin}/console/tsconfig.json`)).status, 404, "only the console's assets are served");
    // Not jwt mode: no OAuth sign-in offered, so the page reaches no other origin.
    assert.deepEqual(await (await fetch(`${origin}/console/settings.json`)).json(), { authMode: "demo" });
    const problems: readonly string[] = browser.problems; // the same list, seen again once the frame was refused
    assert.deepEqual(browser.problems, [], "no script error and no CSP refusal on any console page");
    const framing = await browser.page();
    await framing.goto(`${origin}/livez`);
    await framing.setContent(`<iframe src="${origin}/console"></iframe>`, { waitUntil: "load" });
    const framed = framing.frames().find((frame) => frame !== framing.mainFrame());
    assert.ok(framed, "the iframe exists");
    assert.equal(await framed.locator("#main").count(), 0, "the console did not load in a frame");
    assert.ok(
      problems.some((problem) => problem.includes("frame-ancestors 'none'")),
      "Chromium refused the frame because of frame-ancestors",
    );
    await framing.close();
  });
});
