// authenticate: the one bearer check for every door — each way a request can fail gets its status,
// reason, message and WWW-Authenticate (error only when a token was presented), and a token never
// appears in what goes back. Real resolvers (tokens; jwt against a JWKS served on 127.0.0.1); one
// fake, named below, for a resolver that throws, which no real resolver does.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type AuthenticateInput, type AuthenticateResult, authenticate } from "../../src/auth/authenticate.js";
import { type IdentityResolver, sha256Hex } from "../../src/auth/identity.js";
import { createJwtResolver } from "../../src/auth/jwtResolver.js";
import { checkRequiredScopes } from "../../src/auth/requiredScopes.js";
import { createTokenResolver } from "../../src/auth/tokenResolver.js";
import { JwtSchema } from "../../src/config/schema.js";
import { startJwksServer } from "../support/servers/jwks.js";

const META = "https://gw.example.com/.well-known/oauth-protected-resource/mcp";
const READER = "reader-secret-token";
const CALLER = "caller-secret-token";
const tokens = createTokenResolver([
  { sha256: sha256Hex(READER), subject: "reader", scopes: ["tools:read"] },
  { sha256: sha256Hex(CALLER), subject: "caller", scopes: ["tools:read", "tools:call"] },
]);

const run = (authorization: AuthenticateInput["authorization"], extra: Partial<AuthenticateInput> = {}) =>
  authenticate({ authorization, resolver: tokens, requiredScopes: [], resourceMetadataUrl: META, ...extra });

function refused(result: AuthenticateResult) {
  assert.equal(result.ok, false, JSON.stringify(result));
  assert.ok(!result.ok);
  return result;
}

describe("authenticate: no usable credentials (401, no error attribute)", () => {
  it("no Authorization header", async () => {
    for (const header of [undefined, [] as string[], "", "   "]) {
      const result = refused(await run(header));
      assert.equal(result.status, 401);
      assert.equal(result.reason, "missing_token");
      assert.match(result.message, /Authorization: Bearer <token> is required/);
      assert.equal(result.wwwAuthenticate, `Bearer resource_metadata="${META}"`);
    }
  });

  it("names the required scopes in the 401 challenge when a door requires some", async () => {
    const result = refused(await run(undefined, { requiredScopes: ["tools:call"] }));
    assert.equal(result.wwwAuthenticate, `Bearer resource_metadata="${META}", scope="tools:call"`);
  });

  it("another scheme: says which, never shows the credentials", async () => {
    const result = refused(await run("Basic dXNlcjpwYXNzd29yZA=="));
    assert.equal(result.status, 401);
    assert.equal(result.reason, "unsupported_scheme");
    assert.equal(result.message, "the Authorization scheme 'Basic' is not supported: use Authorization: Bearer <token>");
    assert.equal(result.wwwAuthenticate, `Bearer resource_metadata="${META}"`);
    const odd = refused(await run("@@@ secret"));
    assert.equal(odd.reason, "unsupported_scheme");
    assert.ok(!odd.message.includes("secret"));
  });

  it("without a metadata URL the challenge is plain Bearer", async () => {
    assert.equal(refused(await run(undefined, { resourceMetadataUrl: undefined })).wwwAuthenticate, "Bearer");
  });
});

describe("authenticate: malformed Authorization (400 invalid_request)", () => {
  it("the header sent twice", async () => {
    const result = refused(await run([`Bearer ${CALLER}`, `Bearer ${READER}`]));
    assert.equal(result.status, 400);
    assert.equal(result.reason, "duplicate_authorization");
    assert.match(result.message, /sent 2 times: send it once/);
    assert.match(result.wwwAuthenticate ?? "", /error="invalid_request"/);
    assert.ok(!JSON.stringify(result).includes(CALLER) && !JSON.stringify(result).includes(READER));
  });

  it("Bearer with an empty token", async () => {
    for (const header of ["Bearer", "Bearer ", "bearer \t "]) {
      const result = refused(await run(header));
      assert.equal(result.status, 400);
      assert.equal(result.reason, "empty_token");
      assert.equal(
        result.wwwAuthenticate,
        `Bearer resource_metadata="${META}", error="invalid_request", error_description="the Bearer token is empty: use Authorization: Bearer <token>"`,
      );
    }
  });

  it("Bearer with more than one word", async () => {
    const result = refused(await run(`Bearer ${CALLER} extra`));
    assert.equal(result.status, 400);
    assert.equal(result.reason, "malformed_authorization");
    assert.ok(!JSON.stringify(result).includes(CALLER));
  });
});

describe("authenticate: tokens", () => {
  it("a valid token: the identity (scheme case-insensitive, one-element list accepted)", async () => {
    for (const header of [`Bearer ${CALLER}`, `bearer ${CALLER}`, `BEARER  ${CALLER} `, [`Bearer ${CALLER}`]]) {
      assert.deepEqual(await run(header), { ok: true, identity: { subject: "caller", scopes: ["tools:read", "tools:call"] } });
    }
  });

  it("an invalid token: 401 invalid_token with the resolver's description, token not echoed", async () => {
    const token = "not-a-configured-token";
    const result = refused(await run(`Bearer ${token}`));
    assert.equal(result.status, 401);
    assert.equal(result.reason, "invalid_token");
    assert.equal(result.message, "the bearer token is not valid: the token is not one of the tokens this gateway accepts (auth.tokens)");
    assert.equal(
      result.wwwAuthenticate,
      `Bearer resource_metadata="${META}", error="invalid_token", error_description="${result.message}"`,
    );
    assert.ok(!JSON.stringify(result).includes(token));
  });

  it("a valid token without a required scope: 403 insufficient_scope with the scope list", async () => {
    const result = refused(await run(`Bearer ${READER}`, { requiredScopes: ["tools:read", "tools:call"] }));
    assert.equal(result.status, 403);
    assert.equal(result.reason, "insufficient_scope");
    assert.equal(result.message, "the token lacks the scope 'tools:call' (required: tools:read tools:call)");
    assert.equal(
      result.wwwAuthenticate,
      `Bearer resource_metadata="${META}", scope="tools:read tools:call", error="insufficient_scope", error_description="${result.message}"`,
    );
    assert.equal((await run(`Bearer ${CALLER}`, { requiredScopes: ["tools:read", "tools:call"] })).ok, true);
  });
});

describe("authenticate: the verifier cannot judge the token (503, no challenge)", () => {
  it("the JWKS is down: verifier_unavailable, the URL and cause in detail only", async () => {
    const kit = await startJwksServer({ kids: ["k1"] });
    try {
      kit.behaviour = "http-500";
      const resolver = createJwtResolver(JwtSchema.parse({ jwksUrl: kit.jwksUrl, issuer: kit.issuer, audience: kit.audience }));
      const token = await kit.sign();
      const result = refused(await run(`Bearer ${token}`, { resolver }));
      assert.equal(result.status, 503);
      assert.equal(result.reason, "verifier_unavailable");
      assert.equal(result.wwwAuthenticate, undefined);
      assert.match(result.message, /cannot verify access tokens right now.*try again shortly/);
      assert.ok(!result.message.includes(kit.jwksUrl), "the client is not told internal URLs");
      assert.equal(result.detail, `the JWKS at ${kit.jwksUrl} answered HTTP 500 instead of 200`);
      assert.ok(!JSON.stringify(result).includes(token));
    } finally {
      await kit.close();
    }
  });

  it("a resolver that throws (FAKE: a deliberately broken resolver; real ones never throw) fails closed", async () => {
    const broken: IdentityResolver = {
      mode: "broken",
      resolve: async () => {
        throw new Error("database on fire");
      },
    };
    const result = refused(await run(`Bearer ${CALLER}`, { resolver: broken }));
    assert.equal(result.status, 503);
    assert.equal(result.reason, "verifier_error");
    assert.equal(result.detail, "the broken resolver threw: database on fire");
  });
});

describe("checkRequiredScopes", () => {
  it("nothing required: everyone passes, even without scopes", () => {
    assert.deepEqual(checkRequiredScopes({ subject: "a" }, []), { ok: true });
  });

  it("an identity without scopes has none (fails closed); the missing ones are listed", () => {
    assert.deepEqual(checkRequiredScopes({ subject: "a" }, ["x", "y"]), {
      ok: false,
      error: "insufficient_scope",
      description: "the token lacks the scopes 'x', 'y' (required: x y)",
      scope: ["x", "y"],
      missing: ["x", "y"],
    });
    assert.deepEqual(checkRequiredScopes({ subject: "a", scopes: ["y", "x", "z"] }, ["x", "y"]), { ok: true });
  });
});
