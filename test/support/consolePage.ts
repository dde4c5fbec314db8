// Test kit for the web console in a browser page: sign in with a bearer token, find a task's card.
// Not a test file.

import type { Page } from "playwright-core";

/** Opens `${origin}/console`, signs in with `token` and waits until the page names who is signed in. */
export async function signIn(page: Page, origin: string, token: string, shown = token): Promise<void> {
  await page.goto(`${origin}/console`);
  await page.getByLabel("Bearer token").fill(token);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.locator("#who", { hasText: shown }).waitFor();
}

/** A task's card in the console's lists. */
export const card = (page: Page, taskId: string) => page.locator(`article[data-task="${taskId}"]`);
