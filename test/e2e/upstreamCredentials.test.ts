// E2E: what the upstream sees (issue 11, problem 3). A real HTTP proxy of ours in front of the
// example legacy server records the headers of every request that reached it and, like a protected
// upstream, answers 401 to requests without the credentials it wants. Shown for both doors:
// upstream.headers (a secret from the environment through `${NAME}`), forwardAuthorization (the
// caller's own token, unchanged), subjectHeader (who the call is for; a caller cannot forge it),
// the caller's token never passed on by default, and an upstream 401/403 reported as such.
// Run: node --import tsx --test test/e2e/upstreamCredentials.test.ts

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { after, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import { loadConfig } from "../../src/config/loadConfig.js";
import type { ConfigInput } from "../../src/config/schema.js";
import { type Gateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/observability/logger.js";
import { ErrorCode } from "../../src/protocol/errors.js";
import { connectLegacyClient, legacyInitialize, legacyRequest } from "../support/legacyClient.js";
import { errorOf, resultOf, rpc } from "../support/mcpClient.js";
import { type CountingProxy, type CountingProxyOptions, startCountingProxy } from "../support/servers/countingProxy.js";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const TOKENS = [
  { sha256: sha256("s3cret-alice"), subject: "alice" },
  { sha256: sha256("s3cret-bob"), subject: "bob" },
];

interface Setup {
  legacy: LegacyServer;
  proxy: CountingProxy;
  gateway: Gateway;
  close(): Promise<void>;
}

const opened: Setup[] = [];
after(async () => {
  for (const setup of opened) await setup.close();
});

/** Example server ← recording proxy (maybe refusing) ← taskgate configured through loadConfig (so `${NAME}` expands from `env`). */
async function startSetup(
  upstream: Partial<ConfigInput["upstream"]>,
  refuse: CountingProxyOptions["refuse"],
  env: NodeJS.ProcessEnv = {},
): Promise<Setup> {
  const legacy = await startLegacyServer({ port: 0, speed: 20 });
  const proxy = await startCountingProxy(legacy.url, refuse ? { refuse } : {});
  const config = loadConfig({
    env,
    overrides: { port: 0, auth: { mode: "tokens", tokens: TOKENS }, shutdown: { graceMs: 0 }, upstream: { ...upstream, url: proxy.url } },
  });
  const gateway = await startGateway(config, { log: createLogger(process.env.TEST_LOG_LEVEL ?? "silent") });
  const setup = {
    legacy,
    proxy,
    gateway,
    async close() {
      await gateway.close();
      await proxy.close();
      await legacy.close();
    },
  };
  opened.push(setup);
  return setup;
}

const callGreet = (url: string, token: string, name = "Ada") => rpc(url, "tools/call", { name: "greet", arguments: { name } }, { token });
const textOf = (result: unknown) => JSON.stringify((result as { content: unknown }).content);
const allSeen = (proxy: CountingProxy, pick: (headers: IncomingHttpHeaders) => unknown) =>
  proxy.seen.map((request) => pick(request.headers));

describe("upstream.headers: static credentials, the secret from the environment", () => {
  const KEY = "k-7f3a9c";
  const wantsKey = (headers: IncomingHttpHeaders) => (headers["x-api-key"] === KEY ? undefined : 401);

  test("every request on both doors carries the key; the caller's own token never reaches the upstream", async () => {
    const setup = await startSetup({ headers: { "X-Api-Key": "${TG_E2E_API_KEY}" } }, wantsKey, { TG_E2E_API_KEY: KEY });
    const modern = await callGreet(setup.gateway.url, "s3cret-alice");
    assert.equal(modern.status, 200, JSON.stringify(modern.message));
    assert.match(textOf(resultOf(modern)), /Ada/);

    const { client } = await connectLegacyClient(setup.gateway.url, "s3cret-bob");
    assert.match(textOf(await client.callTool({ name: "greet", arguments: { name: "Bo" } })), /Bo/);
    await client.close();

    assert.ok(setup.proxy.seen.length >= 4);
    assert.deepEqual(
      setup.proxy.seen.filter((request) => request.refused),
      [],
      "nothing was refused",
    );
    assert.ok(
      allSeen(setup.proxy, (h) => h["x-api-key"]).every((key) => key === KEY),
      "the key on every request, modern and legacy",
    );
    assert.deepEqual(
      allSeen(setup.proxy, (h) => h.authorization).filter(Boolean),
      [],
      "no caller token passed on (forwardAuthorization is off)",
    );
  });

  test("a wrong key: the upstream's 401 reaches the modern caller as such (HTTP 502, named), not 'Internal error'", async () => {
    const setup = await startSetup({ headers: { "X-Api-Key": "not-the-key" } }, wantsKey);
    const reply = await callGreet(setup.gateway.url, "s3cret-alice");
    assert.equal(reply.status, 502);
    const error = errorOf(reply);
    assert.equal(error.code, ErrorCode.InternalError);
    assert.match(error.message, /the upstream refused our credentials \(HTTP 401\)/);
    assert.match(error.message, /upstream\.headers/);
    assert.doesNotMatch(error.message, /not-the-key/, "the credential itself is never shown");
    assert.deepEqual(error.data, { reason: "upstream_auth", upstreamStatus: 401 });
    const list = await rpc(setup.gateway.url, "tools/list", {}, { token: "s3cret-alice" });
    assert.equal(list.status, 502);
    assert.match(errorOf(list).message, /HTTP 401/);
    // The legacy door passes the upstream's own answer on.
    const legacy = await legacyRequest(setup.gateway.url, { body: legacyInitialize(), token: "s3cret-alice" });
    assert.equal(legacy.status, 401);
  });

  test("a variable that is not set is a config error naming it", () => {
    assert.throws(
      () =>
        loadConfig({
          env: {},
          overrides: { auth: { mode: "demo" }, upstream: { url: "http://127.0.0.1:1/mcp", headers: { "X-Api-Key": "${TG_E2E_MISSING}" } } },
        }),
      /upstream\.headers\.X-Api-Key: environment variable TG_E2E_MISSING is not set/,
    );
  });
});

describe("upstream.forwardAuthorization: the caller's own token, unchanged", () => {
  const accepted = new Set(["Bearer s3cret-alice"]);
  const wantsAlice = (headers: IncomingHttpHeaders) => (accepted.has(String(headers.authorization)) ? undefined : 403);

  test("Alice's token reaches the upstream on both doors; Bob's (valid for taskgate, not for the upstream) gets 403 named", async () => {
    const setup = await startSetup({ forwardAuthorization: true }, wantsAlice);
    const alice = await callGreet(setup.gateway.url, "s3cret-alice");
    assert.equal(alice.status, 200, JSON.stringify(alice.message));
    const { client } = await connectLegacyClient(setup.gateway.url, "s3cret-alice");
    assert.ok((await client.listTools()).tools.length > 0);
    await client.close();
    const aliceSaw = setup.proxy.seen.filter((request) => !request.refused);
    assert.ok(aliceSaw.length >= 4);
    assert.ok(aliceSaw.every((request) => request.headers.authorization === "Bearer s3cret-alice"));

    const bob = await callGreet(setup.gateway.url, "s3cret-bob");
    assert.equal(bob.status, 403, JSON.stringify(bob.message));
    assert.match(errorOf(bob).message, /the upstream refused our credentials \(HTTP 403\).*forward/);
    assert.equal(errorOf(bob).data?.reason, "upstream_auth");
    assert.ok(setup.proxy.seen.some((request) => request.refused === 403 && request.headers.authorization === "Bearer s3cret-bob"));

    // Readiness: taskgate has no token of its own to show; the upstream's 401/403 proves it answers.
    assert.equal((await fetch(new URL("/readyz", setup.gateway.url))).status, 200);
  });

  test("forwarding together with a static Authorization header is refused at load (never both by accident)", () => {
    assert.throws(
      () =>
        loadConfig({
          env: {},
          overrides: {
            auth: { mode: "demo" },
            upstream: { url: "http://127.0.0.1:1/mcp", forwardAuthorization: true, headers: { authorization: "Bearer svc" } },
          },
        }),
      /upstream\.forwardAuthorization: .*never both by accident/,
    );
  });
});

describe("upstream.subjectHeader: who each call is for", () => {
  test("the upstream sees the subject on every request of that identity's sessions, on both doors; a forged header is replaced", async () => {
    const setup = await startSetup({ subjectHeader: "X-User" }, undefined);
    assert.equal((await callGreet(setup.gateway.url, "s3cret-alice")).status, 200);
    assert.equal((await callGreet(setup.gateway.url, "s3cret-bob", "Bo")).status, 200);
    // Bob's legacy client claims to be admin: the upstream hears "bob".
    const { client } = await connectLegacyClient(setup.gateway.url, "s3cret-bob", { "X-User": "admin" });
    assert.ok((await client.listTools()).tools.length > 0);
    await client.close();

    const calls = setup.proxy.forwarded.filter((request) => request.method === "tools/call");
    const subjectOf = (name: string) =>
      calls.find((request) => (request.params?.arguments as { name?: string } | undefined)?.name === name)?.headers["x-user"];
    assert.equal(subjectOf("Ada"), "alice");
    assert.equal(subjectOf("Bo"), "bob");
    // Per identity: every request of a session carries that session's subject.
    const bySession = new Map<string, Set<unknown>>();
    for (const request of setup.proxy.forwarded) {
      if (!request.sessionId) continue;
      const subjects = bySession.get(request.sessionId) ?? new Set();
      subjects.add(request.headers["x-user"]);
      bySession.set(request.sessionId, subjects);
    }
    for (const [session, subjects] of bySession)
      assert.equal(subjects.size, 1, `session ${session} heard one subject, got ${[...subjects].join(", ")}`);
    const subjects = allSeen(setup.proxy, (h) => h["x-user"]);
    assert.ok(!subjects.includes("admin"), "the caller's own X-User never reaches the upstream");
    assert.ok(subjects.includes("bob") && subjects.includes("alice"));
    assert.ok(
      subjects.filter((subject) => subject !== undefined).every((subject) => subject === "alice" || subject === "bob"),
      String(subjects),
    );
  });
});
