// The jwt resolver (auth.mode "jwt") against real tokens: a JWKS served over HTTP on 127.0.0.1 by the
// test (support/servers/jwks.ts: keys generated with jose, rotated by changing what is published), and a real
// OpenID provider (oidc-provider, oidcIssuer.ts) issuing client-credentials JWT access tokens for a
// resource. Every refusal is checked for its error code, a description naming the problem, and the
// absence of the token in it; JWKS faults (refused, timeout, HTTP 500, redirect, not JSON, not a JWK
// Set) must come back as temporarily_unavailable, never as the client's fault.

import assert from "node:assert/strict";
import { createPublicKey, generateKeyPairSync } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { CompactEncrypt, generateKeyPair, SignJWT, UnsecuredJWT } from "jose";
import type { ResolveResult } from "../../src/auth/identity.js";
import type { JwtOptions } from "../../src/auth/jwtKeys.js";
import { createJwtResolver } from "../../src/auth/jwtResolver.js";
import { JwtSchema } from "../../src/config/schema.js";
import { closedPortUrl, type JwksServer, startJwksServer } from "../support/servers/jwks.js";
import { CLIENT_ID, type OidcIssuer, startOidcIssuer } from "../support/servers/oidcIssuer.js";
import { identityResolverContract } from "./identityResolver.contract.js";

const issuerKit: JwksServer = await startJwksServer({ kids: ["k1"] });
after(() => issuerKit.close());

/** Options through the real config schema (its defaults), pointing at the test JWKS. */
function options(overrides: Record<string, unknown> = {}): JwtOptions {
  return JwtSchema.parse({ jwksUrl: issuerKit.jwksUrl, issuer: issuerKit.issuer, audience: issuerKit.audience, ...overrides });
}

function refusedWith(result: ResolveResult, token: string, pattern: RegExp, error = "invalid_token"): string {
  assert.equal(result.ok, false, `expected a refusal, got ${JSON.stringify(result)}`);
  assert.ok(!result.ok);
  assert.equal(result.error, error);
  assert.match(result.description, pattern);
  assert.ok(!result.description.includes(token), "the description never contains the token");
  return result.description;
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace(/\.000Z$/, "Z");
const now = () => Math.floor(Date.now() / 1000);

identityResolverContract("jwt", async () => ({
  resolver: createJwtResolver(options()),
  mode: "jwt",
  validToken: await issuerKit.sign({ claims: { sub: "alice" } }),
  subject: "alice",
  invalidToken: await issuerKit.sign({ claims: { aud: "http://127.0.0.1:9/someone-else" } }),
}));

describe("jwt resolver: accepted tokens", () => {
  it("takes the subject from `sub` and the scopes from `scope`", async () => {
    const token = await issuerKit.sign({ claims: { sub: "alice", scope: "tools:read tools:call" } });
    const result = await createJwtResolver(options()).resolve(token);
    assert.ok(result.ok);
    const { claims, ...identity } = result.identity;
    assert.deepEqual(identity, { subject: "alice", scopes: ["tools:read", "tools:call"] });
    assert.equal(claims?.scope, "tools:read tools:call", "the token's claims come with it (access rules may name one, e.g. groups)");
  });

  it("reads `scp` as an array or a space-separated string, merged with `scope`; no scope claim = no scopes", async () => {
    const resolver = createJwtResolver(options());
    const scopesOf = async (claims: Record<string, unknown>) => {
      const result = await resolver.resolve(await issuerKit.sign({ claims }));
      assert.ok(result.ok, JSON.stringify(result));
      return result.identity.scopes;
    };
    assert.deepEqual(await scopesOf({ scp: ["a", "b"] }), ["a", "b"]);
    assert.deepEqual(await scopesOf({ scp: "a  b" }), ["a", "b"]);
    assert.deepEqual(await scopesOf({ scope: "a c", scp: ["b", "a"] }), ["a", "c", "b"]);
    assert.deepEqual(await scopesOf({}), []);
  });

  it("takes the subject from a configured claim, a top-level name even when it contains dots", async () => {
    const claim = "https://example.com/claims.user_id";
    const resolver = createJwtResolver(options({ subjectClaim: claim }));
    const result = await resolver.resolve(await issuerKit.sign({ claims: { sub: "client-7", [claim]: "u-42" } }));
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.identity.subject, "u-42");
    const missing = await issuerKit.sign({ claims: { sub: "client-7" } });
    refusedWith(await resolver.resolve(missing), missing, /no 'https:\/\/example\.com\/claims\.user_id' claim/);
  });

  it("accepts a token naming any configured audience (list), or listing ours among others", async () => {
    const resolver = createJwtResolver(options({ audience: ["https://a.example/mcp", issuerKit.audience] }));
    assert.ok((await resolver.resolve(await issuerKit.sign())).ok);
    const single = createJwtResolver(options());
    assert.ok((await single.resolve(await issuerKit.sign({ claims: { aud: ["https://other.example", issuerKit.audience] } }))).ok);
  });

  it("honours auth.jwt.clockToleranceSec for exp and nbf", async () => {
    const justExpired = await issuerKit.sign({ claims: { exp: now() - 10 } });
    const almostValid = await issuerKit.sign({ claims: { nbf: now() + 10 } });
    const lenient = createJwtResolver(options({ clockToleranceSec: 30 }));
    assert.ok((await lenient.resolve(justExpired)).ok);
    assert.ok((await lenient.resolve(almostValid)).ok);
    const strict = createJwtResolver(options({ clockToleranceSec: 0 }));
    refusedWith(await strict.resolve(justExpired), justExpired, /expired/);
    refusedWith(await strict.resolve(almostValid), almostValid, /not valid before/);
  });
});

describe("jwt resolver: verified tokens remembered (auth.jwt.verifiedCacheMs)", () => {
  it("a token verified once is answered at once, without a promise, until verifiedCacheMs has passed; then verified again", async () => {
    let t = Date.now();
    const r = createJwtResolver(options({ verifiedCacheMs: 60_000 }), () => t);
    const token = await issuerKit.sign({ claims: { sub: "alice" } });
    const first = r.resolve(token);
    assert.ok(first instanceof Promise, "the first request verifies the token");
    assert.ok((await first).ok);
    const again = r.resolve(token);
    assert.ok(!(again instanceof Promise) && again.ok, "remembered: no signature check, no promise");
    assert.equal(again.identity.subject, "alice");
    t += 60_001;
    const later = r.resolve(token);
    assert.ok(later instanceof Promise, "past verifiedCacheMs the token is verified again");
    assert.ok((await later).ok);
  });

  it("never past the token's exp: then it is verified again, and refused as expired", async () => {
    let t = Date.now();
    const exp = now() + 30;
    const r = createJwtResolver(options({ verifiedCacheMs: 600_000, clockToleranceSec: 0 }), () => t);
    const token = await issuerKit.sign({ claims: { exp } });
    assert.ok((await r.resolve(token)).ok);
    assert.ok(!(r.resolve(token) instanceof Promise), "remembered before its exp");
    t = exp * 1000 + 1;
    refusedWith(await r.resolve(token), token, /expired/);
  });

  it("a retired key: a token it verified is accepted until its entry ends; new tokens of that key are refused at once", async () => {
    const kit = await startJwksServer({ kids: ["old"] });
    try {
      let t = Date.now();
      const r = createJwtResolver(
        { ...options({ jwksCooldownMs: 0, verifiedCacheMs: 60_000 }), jwksUrl: kit.jwksUrl, issuer: kit.issuer },
        () => t,
      );
      const seen = await kit.sign({ kid: "old", claims: { sub: "seen" } });
      assert.ok((await r.resolve(seen)).ok);
      await kit.addKey("new");
      kit.publish("new");
      assert.ok((await r.resolve(await kit.sign({ kid: "new" }))).ok, "the new key's token made it fetch the rotated JWKS");
      const unseen = await kit.sign({ kid: "old", claims: { sub: "unseen" } });
      refusedWith(await r.resolve(unseen), unseen, /no key 'old'/);
      const remembered = r.resolve(seen);
      assert.ok(!(remembered instanceof Promise) && remembered.ok, "verified before the rotation: remembered");
      t += 60_001;
      refusedWith(await r.resolve(seen), seen, /no key 'old'/);
    } finally {
      await kit.close();
    }
  });
});

describe("jwt resolver: refused tokens (invalid_token, with a description a person can act on)", () => {
  const resolver = () => createJwtResolver(options());

  it("expired: says when", async () => {
    const exp = now() - 3600;
    const token = await issuerKit.sign({ claims: { exp } });
    refusedWith(await resolver().resolve(token), token, new RegExp(`^the token expired at ${iso(exp)} \\(allowed clock skew 30 s\\)$`));
  });

  it("not yet valid: says from when", async () => {
    const nbf = now() + 3600;
    const token = await issuerKit.sign({ claims: { nbf } });
    refusedWith(await resolver().resolve(token), token, new RegExp(`^the token is not valid before ${iso(nbf)}`));
  });

  it("wrong audience: names both", async () => {
    const token = await issuerKit.sign({ claims: { aud: "https://other.example/api" } });
    const description = refusedWith(await resolver().resolve(token), token, /^audience 'https:\/\/other\.example\/api' is not /);
    assert.ok(description.endsWith(`'${issuerKit.audience}'`), description);
    const listed = createJwtResolver(options({ audience: ["https://a.example", "https://b.example"] }));
    refusedWith(await listed.resolve(token), token, /is not one of 'https:\/\/a\.example', 'https:\/\/b\.example'$/);
  });

  it("wrong issuer: names both", async () => {
    const token = await issuerKit.sign({ claims: { iss: "https://evil.example" } });
    refusedWith(
      await resolver().resolve(token),
      token,
      new RegExp(`^issuer 'https://evil\\.example' is not '${issuerKit.issuer.replace(/[.]/g, "\\.")}'$`),
    );
  });

  it("bad signature: a forger's key under the published kid, and a payload altered after signing", async () => {
    const { privateKey: forger } = await generateKeyPair("ES256");
    const forged = await issuerKit.sign({ signWith: forger });
    refusedWith(await resolver().resolve(forged), forged, /^the signature does not verify with the issuer's key 'k1'$/);

    const genuine = await issuerKit.sign({ claims: { sub: "alice" } });
    const [head, , signature] = genuine.split(".");
    const payload = Buffer.from(
      JSON.stringify({ iss: issuerKit.issuer, aud: issuerKit.audience, sub: "mallory", exp: now() + 300 }),
    ).toString("base64url");
    const altered = `${head}.${payload}.${signature}`;
    refusedWith(await resolver().resolve(altered), altered, /signature does not verify/);
  });

  it("unknown kid: the JWKS is fetched again, then the token is refused naming the kid", async () => {
    await issuerKit.addKey("unpublished");
    const token = await issuerKit.sign({ kid: "unpublished" });
    const r = createJwtResolver(options({ jwksCooldownMs: 0 }));
    assert.ok((await r.resolve(await issuerKit.sign())).ok, "a first token loads the JWKS");
    const before = issuerKit.fetches;
    refusedWith(
      await r.resolve(token),
      token,
      /^the issuer's JWKS has no key 'unpublished' for algorithm 'ES256', even after fetching it again/,
    );
    assert.equal(issuerKit.fetches, before + 1, "the unknown kid made the resolver fetch the JWKS again");
  });

  it("malformed: not a JWT, not JSON inside, no alg", async () => {
    const r = resolver();
    for (const token of ["not-a-jwt", "abc.def", "a.b.c.d", "%%%.%%%.%%%"]) {
      refusedWith(await r.resolve(token), token, /^the token is not a JWT \(expected three base64url parts/);
    }
    // A payload that is not JSON is never parsed: the signature is checked first, and fails.
    const notJson = "eyJhbGciOiJFUzI1NiJ9.bm90IGpzb24.c2ln";
    refusedWith(await r.resolve(notJson), notJson, /signature does not verify/);
    const noAlg = `${Buffer.from("{}").toString("base64url")}.${Buffer.from("{}").toString("base64url")}.sig`;
    refusedWith(await r.resolve(noAlg), noAlg, /malformed: .*alg/);
  });

  it("alg none: refused before any key is fetched", async () => {
    const token = new UnsecuredJWT({ iss: issuerKit.issuer, aud: issuerKit.audience, sub: "alice" }).setExpirationTime("5m").encode();
    const before = issuerKit.fetches;
    refusedWith(await resolver().resolve(token), token, /unsigned \(alg 'none'\)/);
    assert.equal(issuerKit.fetches, before, "no JWKS fetch for an unsigned token");
  });

  it("HS256 (shared secret) and algorithms outside auth.jwt.algorithms are refused, naming the allowed ones", async () => {
    const hs = await new SignJWT({ iss: issuerKit.issuer, aud: issuerKit.audience, sub: "alice" })
      .setProtectedHeader({ alg: "HS256", kid: "k1" })
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode("a-shared-secret-of-at-least-32-bytes!!"));
    refusedWith(await resolver().resolve(hs), hs, /^algorithm 'HS256' is not accepted \(allowed: RS256, .*ES256/);

    const onlyRsa = createJwtResolver(options({ algorithms: ["RS256"] }));
    const es = await issuerKit.sign();
    refusedWith(await onlyRsa.resolve(es), es, /^algorithm 'ES256' is not accepted \(allowed: RS256\)$/);
  });

  it("no subject, or a subject that is not a string", async () => {
    const none = await issuerKit.sign({ claims: { sub: undefined } });
    refusedWith(await resolver().resolve(none), none, /^the token has no 'sub' claim/);
    for (const sub of [42, "", ["alice"]]) {
      const token = await issuerKit.sign({ claims: { sub } });
      refusedWith(await resolver().resolve(token), token, /'sub' claim \(the subject\) must be a non-empty string/);
    }
  });

  it("no exp (access tokens must expire), no iss, no aud", async () => {
    const token = await issuerKit.sign({ claims: { exp: undefined } });
    refusedWith(await resolver().resolve(token), token, /^the token has no 'exp' claim: access tokens must expire$/);
    for (const claim of ["iss", "aud"]) {
      const without = await issuerKit.sign({ claims: { [claim]: undefined } });
      refusedWith(await resolver().resolve(without), without, new RegExp(`^the token has no '${claim}' claim$`));
    }
  });

  it("a scope claim of the wrong type", async () => {
    for (const claims of [{ scope: ["a"] }, { scp: [1, 2] }]) {
      const token = await issuerKit.sign({ claims });
      refusedWith(await resolver().resolve(token), token, /claim must be/);
    }
  });

  it("an encrypted token (JWE)", async () => {
    const { publicKey } = await generateKeyPair("RSA-OAEP-256");
    const jwe = await new CompactEncrypt(new TextEncoder().encode("{}"))
      .setProtectedHeader({ alg: "RSA-OAEP-256", enc: "A256GCM" })
      .encrypt(publicKey);
    refusedWith(await resolver().resolve(jwe), jwe, /encrypted \(JWE\)/);
  });
});

describe("jwt resolver: key rotation without a restart", () => {
  it("a token under a newly published key is accepted (JWKS fetched again); a retired key's token is refused", async () => {
    const kit = await startJwksServer({ kids: ["old"] });
    try {
      // Every request verified (verifiedCacheMs 0): the JWKS alone decides (the remembered tokens: below).
      const r = createJwtResolver({ ...options({ jwksCooldownMs: 0, verifiedCacheMs: 0 }), jwksUrl: kit.jwksUrl, issuer: kit.issuer });
      const oldToken = await kit.sign({ kid: "old" });
      assert.ok((await r.resolve(oldToken)).ok);
      assert.equal(kit.fetches, 1);
      assert.ok((await r.resolve(oldToken)).ok);
      assert.equal(kit.fetches, 1, "the JWKS is cached");

      await kit.addKey("new");
      kit.publish("new");
      const newToken = await kit.sign({ kid: "new" });
      const result = await r.resolve(newToken);
      assert.ok(result.ok, JSON.stringify(result));
      assert.equal(kit.fetches, 2, "the unknown kid made it fetch the rotated JWKS");
      refusedWith(await r.resolve(oldToken), oldToken, /no key 'old'/);
    } finally {
      await kit.close();
    }
  });

  it("within auth.jwt.jwksCooldownMs an unknown kid does not fetch again (a flood of random kids cannot hammer the JWKS)", async () => {
    const kit = await startJwksServer({ kids: ["k1"] });
    try {
      const r = createJwtResolver({ ...options({ jwksCooldownMs: 60_000 }), jwksUrl: kit.jwksUrl, issuer: kit.issuer });
      assert.ok((await r.resolve(await kit.sign({ kid: "k1" }))).ok);
      await kit.addKey("k2");
      kit.publish("k1", "k2");
      for (let i = 0; i < 5; i++) {
        const token = await kit.sign({ kid: "k2" });
        refusedWith(await r.resolve(token), token, /no key 'k2'/);
      }
      assert.equal(kit.fetches, 1);
    } finally {
      await kit.close();
    }
  });
});

describe("jwt resolver: a JWKS that cannot be had is temporarily_unavailable, not the client's fault", () => {
  let kit: JwksServer;
  before(async () => {
    kit = await startJwksServer({ kids: ["k1"] });
  });
  after(() => kit.close());
  const fresh = (extra: Record<string, unknown> = {}) =>
    createJwtResolver({ ...options({ jwksTimeoutMs: 300, ...extra }), jwksUrl: kit.jwksUrl, issuer: kit.issuer });

  const cases: Array<[JwksServer["behaviour"], RegExp]> = [
    ["http-500", /answered HTTP 500 instead of 200$/],
    ["redirect", /answered HTTP 302 instead of 200 \(redirects are not followed/],
    ["not-json", /is not JSON$/],
    ["not-a-jwks", /is not a JWK Set/],
    ["hang", /did not answer within 300 ms \(auth\.jwt\.jwksTimeoutMs\)$/],
  ];
  for (const [behaviour, pattern] of cases) {
    it(`${behaviour}: names the JWKS URL and the cause`, async () => {
      kit.behaviour = behaviour;
      try {
        const token = await kit.sign();
        const description = refusedWith(await fresh().resolve(token), token, pattern, "temporarily_unavailable");
        assert.ok(description.startsWith(`the JWKS at ${kit.jwksUrl} `), description);
      } finally {
        kit.behaviour = "ok";
      }
    });
  }

  it("connection refused: names the URL and the cause", async () => {
    const url = await closedPortUrl();
    const r = createJwtResolver({ ...options(), jwksUrl: url, issuer: kit.issuer });
    const token = await kit.sign();
    refusedWith(
      await r.resolve(token),
      token,
      new RegExp(`^the JWKS at ${url} cannot be fetched: .*ECONNREFUSED`),
      "temporarily_unavailable",
    );
  });

  it("recovers without a restart once the JWKS answers again", async () => {
    const r = fresh();
    const token = await kit.sign();
    kit.behaviour = "http-500";
    refusedWith(await r.resolve(token), token, /HTTP 500/, "temporarily_unavailable");
    kit.behaviour = "ok";
    assert.ok((await r.resolve(token)).ok);
  });

  it("a token that is bad on its face is still invalid_token while the JWKS is down", async () => {
    kit.behaviour = "http-500";
    try {
      const r = fresh();
      refusedWith(await r.resolve("not-a-jwt"), "not-a-jwt", /not a JWT/);
      const none = new UnsecuredJWT({ sub: "x" }).encode();
      refusedWith(await r.resolve(none), none, /unsigned/);
    } finally {
      kit.behaviour = "ok";
    }
  });
});

describe("jwt resolver: a fixed public key (auth.jwt.publicKey)", () => {
  const fixed = (publicKey: string, extra: Record<string, unknown> = {}) =>
    createJwtResolver(JwtSchema.parse({ publicKey, issuer: issuerKit.issuer, audience: issuerKit.audience, ...extra }));

  it("PEM (SPKI): verifies tokens of its key, refuses others", async () => {
    const pem = createPublicKey({ key: issuerKit.publicJwkOf("k1") as import("node:crypto").JsonWebKey, format: "jwk" }).export({
      type: "spki",
      format: "pem",
    }) as string;
    const r = fixed(pem);
    assert.ok((await r.resolve(await issuerKit.sign())).ok);
    const { privateKey: other } = await generateKeyPair("ES256");
    const forged = await issuerKit.sign({ signWith: other });
    refusedWith(await r.resolve(forged), forged, /signature does not verify/);
  });

  it("a JWK JSON string (Ed25519, RSA); its `alg` narrows the accepted algorithms", async () => {
    const kit = await startJwksServer();
    try {
      await kit.addKey("ed", "EdDSA");
      const rEd = fixed(JSON.stringify(kit.publicJwkOf("ed")), { issuer: kit.issuer });
      assert.ok((await rEd.resolve(await kit.sign({ kid: "ed" }))).ok);

      const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
      const sign = (alg: string) =>
        new SignJWT({ iss: kit.issuer, aud: kit.audience, sub: "alice" })
          .setProtectedHeader({ alg })
          .setExpirationTime("5m")
          .sign(rsa.privateKey);
      const jwk = { ...rsa.publicKey.export({ format: "jwk" }) };
      assert.ok(
        (await fixed(JSON.stringify(jwk), { issuer: kit.issuer }).resolve(await sign("PS256"))).ok,
        "no alg: RS* and PS* fit an RSA key",
      );
      const rs256Only = fixed(JSON.stringify({ ...jwk, alg: "RS256" }), { issuer: kit.issuer });
      assert.ok((await rs256Only.resolve(await sign("RS256"))).ok);
      const ps = await sign("PS256");
      refusedWith(await rs256Only.resolve(ps), ps, /^algorithm 'PS256' is not accepted \(allowed: RS256\)$/);
    } finally {
      await kit.close();
    }
  });

  it("refuses, at construction, private keys, symmetric keys, garbage, and algorithms the key cannot verify", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const privatePem = privateKey.export({ type: "pkcs8", format: "pem" }) as string;
    const publicPem = publicKey.export({ type: "spki", format: "pem" }) as string;
    assert.throws(() => fixed(privatePem), /auth\.jwt\.publicKey: this PEM is a private key/);
    assert.throws(() => fixed(JSON.stringify(privateKey.export({ format: "jwk" }))), /auth\.jwt\.publicKey: this JWK is a private key/);
    assert.throws(() => fixed(JSON.stringify({ kty: "oct", k: "c2VjcmV0" })), /symmetric key \(kty 'oct'\) is not accepted/);
    assert.throws(() => fixed("hello"), /auth\.jwt\.publicKey: expected a PEM public key/);
    assert.throws(() => fixed("{nope"), /not valid JSON/);
    assert.throws(() => fixed("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"), /the PEM cannot be read/);
    assert.throws(
      () => fixed(publicPem, { algorithms: ["RS256", "PS256"] }),
      /^Error: auth\.jwt\.algorithms: none of RS256, PS256 can be verified with the configured publicKey \(a ec prime256v1 key verifies ES256\)$/,
    );
  });
});

describe("jwt resolver: tokens from a real OpenID provider (oidc-provider, client credentials, resource indicators)", () => {
  let idp: OidcIssuer;
  const resource = "http://127.0.0.1:3000/mcp";
  before(async () => {
    idp = await startOidcIssuer();
  });
  after(() => idp.close());
  const resolverFor = (extra: Record<string, unknown> = {}) =>
    createJwtResolver(JwtSchema.parse({ jwksUrl: idp.jwksUrl, issuer: idp.issuer, audience: resource, jwksCooldownMs: 0, ...extra }));

  it("an access token for our resource resolves to the client with its granted scopes", async () => {
    const result = await resolverFor().resolve(await idp.token(resource, "tools:read tools:call"));
    assert.ok(result.ok);
    const { claims, ...identity } = result.identity;
    assert.deepEqual(identity, { subject: CLIENT_ID, scopes: ["tools:read", "tools:call"] });
    assert.equal(claims?.sub, CLIENT_ID, "the token's claims come with it (access rules may name one)");
  });

  it("an access token issued for another resource is refused (audience)", async () => {
    const token = await idp.token("https://other.example/api");
    refusedWith(await resolverFor().resolve(token), token, new RegExp(`^audience 'https://other\\.example/api' is not '${resource}'$`));
  });

  it("a token of another issuer's configuration is refused (issuer)", async () => {
    const token = await idp.token(resource);
    const r = resolverFor({ issuer: "https://login.example.com" });
    refusedWith(await r.resolve(token), token, /^issuer 'http:\/\/127\.0\.0\.1:\d+' is not 'https:\/\/login\.example\.com'$/);
  });

  it("the provider rotates its signing key: new tokens verify without a restart, the retired key's do not", async () => {
    const r = resolverFor({ verifiedCacheMs: 0 });
    const before = await idp.token(resource);
    assert.ok((await r.resolve(before)).ok);
    const oldKid = idp.kid;
    await idp.rotateKey();
    assert.notEqual(idp.kid, oldKid);
    const after = await idp.token(resource);
    const result = await r.resolve(after);
    assert.ok(result.ok, JSON.stringify(result));
    refusedWith(await r.resolve(before), before, new RegExp(`no key '${oldKid}'`));
  });
});
