// The contract every IdentityResolver meets, as a reusable node:test suite (not a test file itself):
// a valid token resolves to { ok: true, identity } with its subject; an invalid, empty or odd token
// resolves to { ok: false, error: "invalid_token" } with a description that never contains the token;
// a bad token never throws. Call identityResolverContract() once per resolver from a *.test.ts file.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { IdentityResolver, ResolveResult } from "../../src/auth/identity.js";

export interface ResolverFixture {
  resolver: IdentityResolver;
  /** The mode the resolver reports. */
  mode: string;
  /** A token the resolver accepts, and the subject it maps to. */
  validToken: string;
  subject: string;
  /** A non-empty token the resolver refuses. */
  invalidToken: string;
}

function assertRefused(result: ResolveResult, token: string): void {
  assert.equal(result.ok, false, `expected ${JSON.stringify(token.slice(0, 40))} to be refused`);
  if (result.ok) return;
  assert.equal(result.error, "invalid_token");
  assert.equal(typeof result.description, "string");
  assert.ok(result.description.length > 0, "a refusal says why");
  if (token.trim().length >= 4) assert.ok(!result.description.includes(token.trim()), "the description never echoes the token");
}

export function identityResolverContract(name: string, makeFixture: () => ResolverFixture | Promise<ResolverFixture>): void {
  describe(`IdentityResolver contract: ${name}`, () => {
    it("reports its mode", async () => {
      const { resolver, mode } = await makeFixture();
      assert.equal(resolver.mode, mode);
    });

    it("resolves a valid token to its subject", async () => {
      const { resolver, validToken, subject } = await makeFixture();
      const result = await resolver.resolve(validToken);
      assert.ok(result.ok, JSON.stringify(result));
      assert.equal(result.identity.subject, subject);
    });

    it("gives the same answer every time", async () => {
      const { resolver, validToken } = await makeFixture();
      const first = await resolver.resolve(validToken);
      for (let i = 0; i < 3; i++) assert.deepEqual(await resolver.resolve(validToken), first);
    });

    it("refuses an invalid token with invalid_token and a description without the token", async () => {
      const { resolver, invalidToken } = await makeFixture();
      assertRefused(await resolver.resolve(invalidToken), invalidToken);
    });

    it("refuses empty and whitespace-only tokens", async () => {
      const { resolver } = await makeFixture();
      for (const token of ["", " ", "\t\n"]) assertRefused(await resolver.resolve(token), token);
    });

    it("never throws for odd tokens, and refuses them", async () => {
      const { resolver } = await makeFixture();
      for (const token of ["\u0000", "x".repeat(100_000), "\uD800", "💥.💥.💥", "a\r\nb", "a.b.c", "e30.e30.", "....."]) {
        await assert.doesNotReject(async () => resolver.resolve(token)); // a throw, sync or async, would reject
        const result = await resolver.resolve(token);
        // Demo mode accepts some of these as names; every other refusal must be well-formed.
        if (!result.ok) assertRefused(result, token);
      }
    });
  });
}
