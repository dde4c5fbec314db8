// Runs the shared IdentityResolver contract against the demo and tokens resolvers (the jwt resolver runs
// it in jwtResolver.test.ts, against a real JWKS), then checks what is specific to each,
// createIdentityResolver's dispatch (the Authorization header itself: authenticate.test.ts).

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createIdentityResolver } from "../../src/auth/createIdentityResolver.js";
import { createDemoResolver } from "../../src/auth/demoResolver.js";
import { type ResolveResult, sha256Hex } from "../../src/auth/identity.js";
import { createTokenResolver } from "../../src/auth/tokenResolver.js";
import { identityResolverContract } from "./identityResolver.contract.js";

const ALICE_TOKEN = "alice-secret-token";
const BOB_TOKEN = "bob-secret-token";
const tokens = [
  { sha256: sha256Hex(ALICE_TOKEN), subject: "alice" },
  { sha256: sha256Hex(BOB_TOKEN), subject: "bob", scopes: ["tools:call"] },
];

const subjectOf = (result: ResolveResult) => (result.ok ? result.identity.subject : undefined);
function refusal(result: ResolveResult): string {
  assert.equal(result.ok, false, JSON.stringify(result));
  assert.ok(!result.ok);
  assert.equal(result.error, "invalid_token");
  return result.description;
}

identityResolverContract("demo", () => ({
  resolver: createDemoResolver(),
  mode: "demo",
  validToken: "alice",
  subject: "alice",
  invalidToken: "x".repeat(257),
}));

identityResolverContract("tokens", () => ({
  resolver: createTokenResolver(tokens),
  mode: "tokens",
  validToken: ALICE_TOKEN,
  subject: "alice",
  invalidToken: "not-a-configured-token",
}));

describe("demo resolver", () => {
  const resolver = createDemoResolver();

  it("uses the token verbatim as the subject", async () => {
    for (const token of ["bob", "Alice.Smith@example.com", "ünïcødé", "x".repeat(256)]) {
      assert.deepEqual(await resolver.resolve(token), { ok: true, identity: { subject: token } });
    }
  });

  it("refuses tokens longer than 256 characters, saying so", async () => {
    assert.match(refusal(await resolver.resolve("x".repeat(257))), /longer than 256 characters/);
  });

  it("refuses control characters and line separators", async () => {
    for (const token of ["a\u0000b", "a\nb", "a\tb", "a\u007fb", "a\u0085b", "a\u2028b"]) {
      assert.match(refusal(await resolver.resolve(token)), /control characters/, JSON.stringify(token));
    }
  });

  it("refuses tokens with surrounding whitespace (no two spellings of one subject)", async () => {
    assert.match(refusal(await resolver.resolve(" alice")), /whitespace/);
    assert.match(refusal(await resolver.resolve("alice ")), /whitespace/);
  });
});

describe("tokens resolver", () => {
  const resolver = createTokenResolver(tokens);

  it("maps each configured token to its own subject, with the entry's scopes when configured", async () => {
    assert.deepEqual(await resolver.resolve(ALICE_TOKEN), { ok: true, identity: { subject: "alice" } });
    assert.deepEqual(await resolver.resolve(BOB_TOKEN), { ok: true, identity: { subject: "bob", scopes: ["tools:call"] } });
  });

  it("does not accept the hash itself, the subject, or near misses", async () => {
    for (const token of [sha256Hex(ALICE_TOKEN), "alice", `${ALICE_TOKEN} `, ALICE_TOKEN.toUpperCase(), ALICE_TOKEN.slice(0, -1)]) {
      const description = refusal(await resolver.resolve(token));
      assert.match(description, /not one of the tokens/, token);
      assert.ok(!description.includes(token), "the token is not echoed");
    }
  });

  it("refuses an empty token list and malformed hashes at construction", () => {
    assert.throws(() => createTokenResolver([]), /needs at least one token/);
    assert.throws(() => createTokenResolver([{ sha256: "abcd", subject: "x" }]), /64 hex/);
  });
});

describe("createIdentityResolver", () => {
  it("picks the resolver for the mode", async () => {
    const demo = await createIdentityResolver({ mode: "demo", tokens: [] });
    assert.equal(demo.mode, "demo");
    assert.equal(subjectOf(await demo.resolve("carol")), "carol");

    const byToken = await createIdentityResolver({ mode: "tokens", tokens });
    assert.equal(byToken.mode, "tokens");
    assert.equal(subjectOf(await byToken.resolve(ALICE_TOKEN)), "alice");
    refusal(await byToken.resolve("alice"));
  });

  it("refuses tokens mode without tokens, and jwt mode without auth.jwt", async () => {
    await assert.rejects(createIdentityResolver({ mode: "tokens", tokens: [] }), /needs at least one token/);
    await assert.rejects(createIdentityResolver({ mode: "jwt", tokens: [] }), /auth\.jwt: mode 'jwt' needs auth\.jwt/);
  });
});
