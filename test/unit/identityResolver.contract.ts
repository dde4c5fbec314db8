// The contract every IdentityResolver meets, as a reusable node:test suite (not a test file itself):
// a valid token resolves to its subject, an invalid or empty token resolves to undefined, and a bad
// token never throws. Call identityResolverContract() once per resolver from a *.test.ts file.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { IdentityResolver } from "../../src/auth/identity.js";

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

export function identityResolverContract(name: string, makeFixture: () => ResolverFixture): void {
  describe(`IdentityResolver contract: ${name}`, () => {
    it("reports its mode", () => {
      const { resolver, mode } = makeFixture();
      assert.equal(resolver.mode, mode);
    });

    it("resolves a valid token to its subject", async () => {
      const { resolver, validToken, subject } = makeFixture();
      assert.deepEqual(await resolver.resolve(validToken), { subject });
    });

    it("gives the same answer every time", async () => {
      const { resolver, validToken, subject } = makeFixture();
      for (let i = 0; i < 3; i++) assert.deepEqual(await resolver.resolve(validToken), { subject });
    });

    it("resolves an invalid token to undefined", async () => {
      const { resolver, invalidToken } = makeFixture();
      assert.equal(await resolver.resolve(invalidToken), undefined);
    });

    it("resolves empty and whitespace-only tokens to undefined", async () => {
      const { resolver } = makeFixture();
      for (const token of ["", " ", "\t\n"]) assert.equal(await resolver.resolve(token), undefined);
    });

    it("never throws for odd tokens", async () => {
      const { resolver } = makeFixture();
      for (const token of ["\u0000", "x".repeat(100_000), "\uD800", "💥", "a\r\nb"]) {
        await assert.doesNotReject(() => resolver.resolve(token));
      }
    });
  });
}
