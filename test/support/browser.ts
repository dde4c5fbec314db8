// Test kit: Debian's Chromium (/usr/bin/chromium, or CHROMIUM_PATH) headless, driven by
// playwright-core, each launch with a fresh profile (--user-data-dir in a new temporary folder,
// removed at close) and without anything that reaches the network on its own (no component
// updates, sync, background networking, QUIC; a request to anything but loopback is aborted). Every page's script errors and CSP refusals are
// collected, so a test can assert the console ran clean. Not a test file.

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Each wait on the page gives up after this long (naming what it waited for). */
export const PAGE_WAIT_MS = Number(process.env.BROWSER_WAIT_MS ?? 15_000);

export interface Browser {
  context: BrowserContext;
  /** A new tab (its own sessionStorage: its own sign-in) at `width` CSS pixels, its problems collected. */
  page(width?: number): Promise<Page>;
  /** Script errors, console errors and CSP refusals seen on every page so far. */
  problems: string[];
  close(): Promise<void>;
}

export async function openBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: the browser tests need Debian's Chromium (apt-get install -y chromium; .ci/run installs it)`);
  }
  const profile = mkdtempSync(join(tmpdir(), "taskgate-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    timeout: 60_000,
    viewport: { width: 1280, height: 900 },
  });
  context.setDefaultTimeout(PAGE_WAIT_MS);
  // Loopback only: anything else a page asks for (a web font on a provider's login page) is refused here.
  await context.route(
    (url) => !["127.0.0.1", "localhost", "[::1]"].includes(url.hostname) && url.protocol !== "data:",
    (route) => route.abort("blockedbyclient"),
  );
  const problems: string[] = [];
  for (const page of context.pages()) await page.close();
  return {
    context,
    problems,
    async page(width = 1280) {
      const page = await context.newPage();
      await page.setViewportSize({ width, height: width < 600 ? 844 : 900 });
      page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
      // Failed loads (an answer of 404, a refused font) are the page's business; script errors and CSP refusals are not.
      page.on("console", (message) => {
        if (message.type() === "error" && !message.text().startsWith("Failed to load resource"))
          problems.push(`console: ${message.text()}`);
      });
      return page;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
