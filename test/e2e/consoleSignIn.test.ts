// E2E in a real browser: the console's OAuth sign-in (authorization code + PKCE) against a real
// OpenID provider (oidc-provider, test/support/servers/codeIssuer.ts), taskgate in auth.mode jwt with
// console.oauthClientId. The page discovers the authorization server from taskgate's Protected
// Resource Metadata, leaves for its login and consent pages, comes back with a code, exchanges it
// (with the PKCE verifier, for taskgate's resource) and is signed in as the person who logged in;
// the code is gone from the address bar and only sessionStorage holds the token. The CSP names the
// issuer in connect-src (and nothing more).
// Run: node --import tsx --test test/e2e/consoleSignIn.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Browser, openBrowser } from "../support/browser.js";
import { CONSOLE_CLIENT_ID, CONSOLE_SCOPES, type CodeIssuer, startCodeIssuer } from "../support/servers/codeIssuer.js";
import { type Stack, startStack } from "../support/stack.js";

const RESOURCE = "https://taskgate.test/mcp";

let issuer: CodeIssuer;
let stack: Stack;
let browser: Browser;
let origin: string;

before(async () => {
  issuer = await startCodeIssuer();
  stack = await startStack({
    config: {
      auth: {
        mode: "jwt",
        jwt: { issuer: issuer.issuer, jwksUrl: issuer.jwksUrl, audience: RESOURCE },
        resourceMetadata: { resource: RESOURCE },
      },
      console: { oauthClientId: CONSOLE_CLIENT_ID, oauthScopes: CONSOLE_SCOPES },
    },
  });
  origin = new URL(stack.url).origin;
  await issuer.install(`${origin}/console`, RESOURCE);
  browser = await openBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.close();
  await issuer?.close();
});

describe("console OAuth sign-in in Chromium", () => {
  test("Sign in with the issuer: login and consent there, back with a code, signed in as that person", async () => {
    const page = await browser.page();
    const authorizations: URL[] = [];
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.origin === issuer.issuer && url.searchParams.has("code_challenge")) authorizations.push(url);
    });
    await page.goto(`${origin}/console`);
    const button = page.getByRole("button", { name: `Sign in with ${new URL(issuer.issuer).host}` });
    await button.click();
    await page.waitForURL((url) => url.origin === issuer.issuer);
    await page.locator('input[name="login"]').fill("carol");
    await page.locator('input[name="password"]').fill("any password");
    await page.getByRole("button", { name: "Sign-in" }).click();
    await page.getByRole("button", { name: "Continue" }).click();
    await page.locator("#who", { hasText: "carol" }).waitFor();
    const back = new URL(page.url());
    assert.equal(back.pathname, "/console");
    assert.equal(back.search, "", "the code left the address bar");
    const stored = await page.evaluate("JSON.stringify({ session: Object.keys(sessionStorage), local: localStorage.length })");
    assert.deepEqual(JSON.parse(String(stored)), { session: ["taskgate.token"], local: 0 });
    assert.deepEqual(browser.problems, []);
    // The authorization request: code flow, PKCE S256, for taskgate's resource, with the configured scopes and a state.
    assert.equal(authorizations.length, 1);
    const asked = authorizations[0] as URL;
    assert.equal(asked.searchParams.get("response_type"), "code");
    assert.equal(asked.searchParams.get("code_challenge_method"), "S256");
    assert.equal(asked.searchParams.get("resource"), RESOURCE);
    assert.equal(asked.searchParams.get("scope"), CONSOLE_SCOPES.join(" "));
    assert.equal(asked.searchParams.get("redirect_uri"), `${origin}/console`);
    assert.ok((asked.searchParams.get("state") ?? "").length >= 40);
    await page.close();
  });

  test("the CSP lets the page reach the issuer, and nothing else beyond itself", async () => {
    const csp = (await fetch(`${origin}/console`)).headers.get("content-security-policy") ?? "";
    assert.match(csp, new RegExp(`connect-src 'self' ${issuer.issuer.replace(/[.]/g, "\\.")}(;|$)`));
    const settings = (await (await fetch(`${origin}/console/settings.json`)).json()) as Record<string, unknown>;
    assert.deepEqual(settings, {
      authMode: "jwt",
      resourceMetadata: "/.well-known/oauth-protected-resource/mcp",
      oauth: { clientId: CONSOLE_CLIENT_ID, scope: CONSOLE_SCOPES.join(" ") },
    });
  });
});
