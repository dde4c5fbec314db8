// bearerChallenge: the WWW-Authenticate value (RFC 6750 §3, RFC 9728 §5.1) — resource_metadata always
// when given, error/error_description only when passed (i.e. a token was presented), scope for the
// required scopes, and values that cannot break the header (quotes, backslashes, CR/LF, non-ASCII).

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bearerChallenge } from "../../src/auth/bearerChallenge.js";

const META = "https://gw.example.com/.well-known/oauth-protected-resource/mcp";

describe("bearerChallenge", () => {
  it("no token presented: only resource_metadata (no error attribute, RFC 6750 §3.1)", () => {
    assert.equal(bearerChallenge({ resourceMetadata: META }), `Bearer resource_metadata="${META}"`);
    assert.equal(bearerChallenge(), "Bearer");
  });

  it("invalid token: error and error_description after resource_metadata", () => {
    assert.equal(
      bearerChallenge({ resourceMetadata: META, error: "invalid_token", errorDescription: "the token expired at 2026-11-30T10:00:00Z" }),
      `Bearer resource_metadata="${META}", error="invalid_token", error_description="the token expired at 2026-11-30T10:00:00Z"`,
    );
  });

  it("insufficient scope: the scope list, space-separated", () => {
    assert.equal(
      bearerChallenge({ error: "insufficient_scope", errorDescription: "needs more", scope: ["tools:read", "tools:call"] }),
      'Bearer scope="tools:read tools:call", error="insufficient_scope", error_description="needs more"',
    );
  });

  it("error_description keeps only the characters RFC 6750 allows, and is shortened", () => {
    const header = bearerChallenge({ error: "invalid_token", errorDescription: 'issuer "evil\\x" is not ok\r\nSet-Cookie: a=b; ünï' });
    assert.equal(header, `Bearer error="invalid_token", error_description="issuer 'evil/x' is not ok??Set-Cookie: a=b; ?n?"`);
    const long = bearerChallenge({ error: "invalid_token", errorDescription: "x".repeat(1000) });
    const description = /error_description="([^"]*)"/.exec(long)?.[1] ?? "";
    assert.equal(description.length, 300);
    assert.ok(description.endsWith("..."));
  });

  it("quoted values escape '\"' and '\\' and drop control characters; invalid scope tokens are dropped", () => {
    assert.equal(bearerChallenge({ resourceMetadata: 'https://x/"a\\b\r\n' }), 'Bearer resource_metadata="https://x/\\"a\\\\b"');
    assert.equal(bearerChallenge({ scope: ["ok", "has space", 'q"', "b\\s", ""] }), 'Bearer scope="ok"');
  });

  it("a description is left out without an error", () => {
    assert.equal(bearerChallenge({ errorDescription: "no error given" }), "Bearer");
  });
});
