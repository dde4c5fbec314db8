// E2E in a real browser: the web console over its caller's request quota. Debian's Chromium
// headless (playwright-core, test/support/browser.ts) on the console of a real taskgate
// (quotas.requestsPerMinute: 30, one token each 2 s) in front of the real example legacy server.
// Alice is signed in; her bucket is then emptied (until its next token is a second away), and she
// opens a task's page: taskgate answers 429 with Retry-After, and the console says it is being
// limited, asks again only once that time has passed (no request in between), shows the task, and
// the notice goes away.
// Run: node --import tsx --test test/e2e/consoleRateLimit.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Browser, openBrowser } from "../support/browser.js";
import { card, signIn } from "../support/consolePage.js";
import { type Stack, startStack } from "../support/stack.js";
import { createTask } from "../support/tasks.js";

let stack: Stack;
let browser: Browser;
let origin: string;

before(async () => {
  stack = await startStack({ speed: 20, config: { tasks: { tools: { plan_release: "always" } }, quotas: { requestsPerMinute: 30 } } });
  origin = new URL(stack.url).origin;
  browser = await openBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.close();
});

describe("web console over the request quota, in Chromium", () => {
  test("a 429 shows a clear notice, is retried only after Retry-After, and the page then loads", async () => {
    const taskId = (await createTask(stack.url, "plan_release", {}, { token: "alice" })).taskId as string;
    const page = await browser.page();
    await signIn(page, origin, "alice");
    const taskPath = `/tasks/${encodeURIComponent(taskId)}`;
    // Times from the browser's own clock (the request's timing), not from when this process hears of a response:
    // on a busy machine that event can come hundreds of ms late, which made a correct wait look short.
    const seen: { sentAt: number; headersAt: number; status: number; retryAfter: string | null }[] = [];
    page.on("response", (response) => {
      if (new URL(response.url()).pathname === taskPath) {
        const { startTime, responseStart } = response.request().timing();
        const headersAt = responseStart >= 0 ? startTime + responseStart : Number.NaN;
        seen.push({ sentAt: startTime, headersAt, status: response.status(), retryAfter: response.headers()["retry-after"] ?? null });
      }
    });
    // Empty alice's bucket from the page itself, then open the task at once. The drain goes on until a 429 says
    // Retry-After: 2 (one token each 2 s): the next token is then at least a second away, so the page's request of the
    // task meets an empty bucket however slowly the machine gets to it (a 429 saying 1 may be a few ms from a refill).
    const drained = await page.evaluate(
      async (hash) => {
        const started = Date.now();
        let granted = 0;
        for (;;) {
          const response = await fetch("tasks", { headers: { Authorization: "Bearer alice" } });
          if (response.status !== 429) granted += 1;
          else if (response.headers.get("Retry-After") === "2") break;
        }
        (globalThis as unknown as { location: { hash: string } }).location.hash = hash;
        return { granted, ms: Date.now() - started };
      },
      `#/tasks/${encodeURIComponent(taskId)}`,
    );
    // 30 at once, then one each 2 s while the drain ran (and one the page itself may have been granted before it).
    const allowed = 30 + Math.ceil(drained.ms / 2000) + 1;
    assert.ok(drained.granted <= allowed, `${drained.granted} requests granted in ${drained.ms} ms (at most ${allowed})`);

    const notice = page.locator("#limited");
    await notice.waitFor({ state: "visible" });
    assert.match((await notice.textContent()) ?? "", /limiting your requests .*trying again in \d+ s/);
    await card(page, taskId).waitFor();
    await notice.waitFor({ state: "hidden", timeout: 15_000 });

    const [refused, next] = seen;
    assert.ok(refused && next, JSON.stringify(seen));
    assert.equal(refused.status, 429);
    const retryAfter = Number(refused.retryAfter);
    assert.ok(retryAfter >= 1, `Retry-After: ${refused.retryAfter}`);
    assert.equal(next.status, 200, JSON.stringify(seen));
    // The console starts its wait when the refusal's headers are in, so the next request leaves at least that long after.
    const waited = next.sentAt - refused.headersAt;
    assert.ok(waited >= retryAfter * 1000 - 50, `asked again ${Math.round(waited)} ms after a Retry-After of ${retryAfter} s`);
    assert.equal(seen.length, 2, `no other request of the task in between: ${JSON.stringify(seen)}`);
  });
});
