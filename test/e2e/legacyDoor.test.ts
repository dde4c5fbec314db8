// E2E: one identity on every door (issue 11, problem 1). With auth.mode tokens or jwt, the legacy
// door (old clients: initialize, Mcp-Session-Id) checks the bearer token exactly like the modern
// door, and a legacy session belongs to the identity that opened it: another identity's requests
// on it get 404 as if it did not exist. legacy.auth "open" leaves the door open on purpose;
// legacy.enabled false refuses legacy clients, telling them to speak 2026-07-28. Real example
// legacy server, real SDK 1.x client, real JWTs from a JWKS served over HTTP.
// Run: node --import tsx --test test/e2e/legacyDoor.test.ts

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { ErrorCode } from "../../src/protocol/errors.js";
import { connectLegacyClient, legacyInitialize, legacyRequest, legacyToolsList } from "../support/legacyClient.js";
import { errorOf, rpc } from "../support/mcpClient.js";
import { type JwksServer, startJwksServer } from "../support/servers/jwks.js";
import { type Stack, startStack } from "../support/stack.js";

/** Waits until taskgate's own readiness session is open, so the upstream's session count is steady. */
async function ready(stack: Stack): Promise<void> {
  const status = (await fetch(new URL("/readyz", stack.url))).status;
  assert.equal(status, 200);
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const TOKENS = [
  { sha256: sha256("s3cret-alice"), subject: "alice" },
  { sha256: sha256("s3cret-bob"), subject: "bob" },
];

describe("legacy door, auth.mode tokens (legacy.auth required by default)", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ config: { auth: { mode: "tokens", tokens: TOKENS } } });
    await ready(stack);
  });
  after(() => stack.close());

  test("an old client without a token cannot initialize: 401 with the same challenge as the modern door; no upstream session", async () => {
    const before = stack.legacy.sessionCount();
    const refused = await legacyRequest(stack.url, { body: legacyInitialize() });
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get("www-authenticate") ?? "", /^Bearer/);
    assert.doesNotMatch(refused.headers.get("www-authenticate") ?? "", /error=/, "no token sent: no error attribute (RFC 6750 §3.1)");
    assert.match(String((refused.message.error as { message: string }).message), /Authorization: Bearer <token> is required/);
    const modern = await rpc(stack.url, "tools/list", {}, { token: null });
    assert.equal(modern.status, 401);
    assert.equal(refused.headers.get("www-authenticate"), modern.headers.get("www-authenticate"));
    const wrong = await legacyRequest(stack.url, { body: legacyInitialize(), token: "s3cret-mallory" });
    assert.equal(wrong.status, 401);
    assert.match(wrong.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
    assert.equal(stack.legacy.sessionCount(), before, "nothing reached the upstream");
  });

  test("a GET stream or DELETE without a token is refused too", async () => {
    for (const method of ["GET", "DELETE"] as const) {
      const refused = await legacyRequest(stack.url, { method, sessionId: "any-session" });
      assert.equal(refused.status, 401, method);
    }
  });

  test("with a valid token the SDK 1.x client works through the legacy door", async () => {
    const { client } = await connectLegacyClient(stack.url, "s3cret-alice");
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === "greet"));
    const result = await client.callTool({ name: "greet", arguments: { name: "Ada" } });
    assert.match(JSON.stringify(result.content), /Ada/);
    await client.close();
  });

  test("a legacy session belongs to the identity that opened it: another identity gets 404, like an unknown session", async () => {
    const { client, transport } = await connectLegacyClient(stack.url, "s3cret-alice");
    const sessionId = transport.sessionId as string;
    assert.ok(sessionId);

    const asBob = await legacyRequest(stack.url, { body: legacyToolsList(), token: "s3cret-bob", sessionId });
    const unknown = await legacyRequest(stack.url, { body: legacyToolsList(), token: "s3cret-bob", sessionId: "no-such-session" });
    assert.equal(asBob.status, 404);
    assert.deepEqual(asBob.message, unknown.message, "another identity's session looks exactly like an unknown one");
    assert.equal(errorOf({ message: asBob.message } as never).code, ErrorCode.InvalidRequest);
    assert.match(String((asBob.message.error as { message: string }).message), /Session not found/);
    for (const method of ["GET", "DELETE"] as const) {
      assert.equal((await legacyRequest(stack.url, { method, token: "s3cret-bob", sessionId })).status, 404, `${method} as bob`);
    }
    // No token at all on Alice's session: 401 before anything else.
    assert.equal((await legacyRequest(stack.url, { body: legacyToolsList(), sessionId })).status, 401);

    // Alice's session was not touched (Bob's DELETE did not reach the upstream).
    const asAlice = await legacyRequest(stack.url, { body: legacyToolsList(3), token: "s3cret-alice", sessionId });
    assert.equal(asAlice.status, 200, JSON.stringify(asAlice.message));
    assert.ok((asAlice.message.result as { tools: unknown[] }).tools.length > 0);
    const { tools } = await client.listTools();
    assert.ok(tools.length > 0);
    await transport.terminateSession();
    await client.close();
  });
});

describe("legacy door, auth.mode jwt: the same resolver, the same metadata", () => {
  let stack: Stack;
  let issuer: JwksServer;
  before(async () => {
    issuer = await startJwksServer({ kids: ["k1"] });
    stack = await startStack({
      config: { auth: { mode: "jwt", jwt: { jwksUrl: issuer.jwksUrl, issuer: issuer.issuer, audience: issuer.audience } } },
    });
  });
  after(async () => {
    await stack.close();
    await issuer.close();
  });

  test("a real access token opens a legacy session; an expired one gets 401 invalid_token pointing at the resource metadata", async () => {
    const token = await issuer.sign({ claims: { sub: "carol" } });
    const { client } = await connectLegacyClient(stack.url, token);
    assert.ok((await client.listTools()).tools.length > 0);
    await client.close();

    const expired = await issuer.sign({ claims: { sub: "carol", exp: Math.floor(Date.now() / 1000) - 3600 } });
    const refused = await legacyRequest(stack.url, { body: legacyInitialize(), token: expired });
    assert.equal(refused.status, 401);
    const challenge = refused.headers.get("www-authenticate") ?? "";
    assert.match(challenge, /error="invalid_token"/);
    assert.match(challenge, /expired/);
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    assert.ok(metadataUrl, challenge);
    const metadata = (await (await fetch(metadataUrl)).json()) as { resource: string; authorization_servers: string[] };
    assert.equal(metadata.resource, stack.url);
    assert.deepEqual(metadata.authorization_servers, [issuer.issuer]);
  });

  test("the modern door: the same token works, no token gets a challenge without error pointing at the same metadata", async () => {
    const token = await issuer.sign({ claims: { sub: "carol" } });
    assert.equal((await rpc(stack.url, "tools/list", {}, { token })).status, 200);
    const anonymous = await rpc(stack.url, "tools/list", {}, { token: null });
    assert.equal(anonymous.status, 401);
    const challenge = anonymous.headers.get("www-authenticate") ?? "";
    assert.doesNotMatch(challenge, /error=/);
    assert.match(challenge, /resource_metadata="http:\/\/[^"]+\/\.well-known\/oauth-protected-resource\/mcp"/);
    const forged = await issuer.sign({ claims: { sub: "carol", aud: "http://127.0.0.1:9/someone-else" } });
    const refused = await rpc(stack.url, "tools/list", {}, { token: forged });
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
  });
});

describe("legacy door and quotas.requestsPerMinute: one bucket per identity across both doors", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ config: { auth: { mode: "tokens", tokens: TOKENS }, quotas: { requestsPerMinute: 3 } } });
  });
  after(() => stack.close());

  test("modern and legacy requests of one identity share the bucket; the refusal carries Retry-After", async () => {
    assert.equal((await rpc(stack.url, "tools/list", {}, { token: "s3cret-alice" })).status, 200);
    assert.equal((await legacyRequest(stack.url, { body: legacyInitialize(), token: "s3cret-alice" })).status, 200);
    assert.equal((await rpc(stack.url, "tools/list", {}, { token: "s3cret-alice" })).status, 200);
    const refused = await legacyRequest(stack.url, { body: legacyInitialize(), token: "s3cret-alice" });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get("retry-after"), "20");
    assert.equal((refused.message.error as { data: { reason: string } }).data.reason, "rate_limited");
    assert.equal((await legacyRequest(stack.url, { body: legacyInitialize(), token: "s3cret-bob" })).status, 200, "Bob has his own");
  });
});

describe("legacy.auth open: the legacy door is left unauthenticated on purpose", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ config: { auth: { mode: "tokens", tokens: TOKENS }, legacy: { auth: "open" } } });
  });
  after(() => stack.close());

  test("an old client without a token reaches the upstream; the modern door still requires one", async () => {
    const { client } = await connectLegacyClient(stack.url);
    assert.ok((await client.listTools()).tools.length > 0);
    await client.close();
    assert.equal((await rpc(stack.url, "tools/list", {}, { token: null })).status, 401);
  });
});

describe("legacy.enabled false: the legacy door is closed", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ config: { auth: { mode: "tokens", tokens: TOKENS }, legacy: { enabled: false } } });
    await ready(stack);
  });
  after(() => stack.close());

  test("initialize is refused with -32022 naming 2026-07-28; nothing reaches the upstream; modern clients are served", async () => {
    const before = stack.legacy.sessionCount();
    const refused = await legacyRequest(stack.url, { body: legacyInitialize(), token: "s3cret-alice" });
    assert.equal(refused.status, 400);
    const error = refused.message.error as { code: number; message: string; data: { supported: string[]; requested: string } };
    assert.equal(error.code, ErrorCode.UnsupportedProtocolVersion);
    assert.match(error.message, /2026-07-28 only/);
    assert.match(error.message, /legacy sessions .* are turned off/);
    assert.deepEqual(error.data.supported, ["2026-07-28"]);
    assert.equal(error.data.requested, "2025-11-25");
    await assert.rejects(connectLegacyClient(stack.url, "s3cret-alice"), /2026-07-28/, "the SDK 1.x client shows the reason");
    assert.equal(stack.legacy.sessionCount(), before);
    const modern = await rpc(stack.url, "tools/list", {}, { token: "s3cret-alice" });
    assert.equal(modern.status, 200, JSON.stringify(modern.message));
  });
});

describe("legacy door with scopes of its own (legacy.requiredScopes)", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({
      config: {
        auth: {
          mode: "tokens",
          tokens: [
            { sha256: sha256("s3cret-alice"), subject: "alice", scopes: ["mcp", "mcp:legacy"] },
            { sha256: sha256("s3cret-bob"), subject: "bob", scopes: ["mcp"] },
          ],
          requiredScopes: ["mcp"],
        },
        legacy: { requiredScopes: ["mcp:legacy"] },
      },
    });
    await ready(stack);
  });
  after(() => stack.close());

  test("a token without the legacy door's scope: 403 insufficient_scope naming it on the legacy door, while the modern door serves it", async () => {
    const before = stack.legacy.sessionCount();
    const refused = await legacyRequest(stack.url, { body: legacyInitialize(), token: "s3cret-bob" });
    assert.equal(refused.status, 403);
    assert.match(refused.headers.get("www-authenticate") ?? "", /error="insufficient_scope"/);
    assert.match(refused.headers.get("www-authenticate") ?? "", /scope="mcp:legacy"/);
    assert.match(String((refused.message.error as { message: string }).message), /mcp:legacy/);
    assert.equal(stack.legacy.sessionCount(), before, "nothing reached the upstream");
    const modern = await rpc(stack.url, "tools/list", {}, { token: "s3cret-bob" });
    assert.equal(modern.status, 200, JSON.stringify(modern.message));

    const { client } = await connectLegacyClient(stack.url, "s3cret-alice");
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === "greet"));
    await client.close();
  });
});
