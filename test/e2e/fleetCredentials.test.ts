// What a backend of a fleet sees of the caller: its own upstream options (here subjectHeader), on
// its own path and through the federated endpoint alike. Example server ← recording proxy ←
// taskgate with two backends, one naming the caller in X-User, one not.
// Run: node --import tsx --test test/e2e/fleetCredentials.test.ts

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import { loadConfig } from "../../src/config/loadConfig.js";
import { type Gateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/observability/logger.js";
import { resultOf, rpc } from "../support/mcpClient.js";
import { type CountingProxy, startCountingProxy } from "../support/servers/countingProxy.js";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("a fleet's backends see the caller as their own options say, on every endpoint", () => {
  let legacy: LegacyServer;
  let named: CountingProxy;
  let plain: CountingProxy;
  let gateway: Gateway;
  let base: string;

  before(async () => {
    legacy = await startLegacyServer({ port: 0, speed: 20 });
    [named, plain] = await Promise.all([startCountingProxy(legacy.url), startCountingProxy(legacy.url)]);
    const config = loadConfig({
      overrides: {
        port: 0,
        auth: {
          mode: "tokens",
          tokens: [
            { sha256: sha256("s3cret-alice"), subject: "alice" },
            { sha256: sha256("s3cret-bob"), subject: "bob" },
          ],
        },
        shutdown: { graceMs: 0 },
        backends: { named: { url: named.url, subjectHeader: "X-User" }, plain: { url: plain.url } },
        federation: {},
      } as never,
    });
    gateway = await startGateway(config, { log: createLogger(process.env.TEST_LOG_LEVEL ?? "silent") });
    base = `http://127.0.0.1:${gateway.port}`;
  });
  after(async () => {
    await gateway?.close();
    await Promise.all([named?.close(), plain?.close()]);
    await legacy?.close();
  });

  test("subjectHeader reaches its backend through /mcp/<name> and through the federated endpoint; the other backend never sees it", async () => {
    const direct = await rpc(`${base}/mcp/named`, "tools/call", { name: "greet", arguments: { name: "a" } }, { token: "s3cret-alice" });
    assert.match(JSON.stringify(resultOf(direct)), /Hello, a!/);
    const calls = () => named.forwarded.filter((request) => request.method === "tools/call");
    assert.equal(calls().at(-1)?.headers["x-user"], "alice");
    // bob never called /mcp/named: only the federated endpoint can have told the backend who he is.
    const federated = await rpc(`${base}/mcp`, "tools/call", { name: "named__greet", arguments: { name: "b" } }, { token: "s3cret-bob" });
    assert.match(JSON.stringify(resultOf(federated)), /Hello, b!/);
    assert.equal(calls().length, 2);
    assert.equal(calls().at(-1)?.headers["x-user"], "bob", "the federated call carries the caller's subject too");
    await rpc(`${base}/mcp`, "tools/call", { name: "plain__greet", arguments: { name: "c" } }, { token: "s3cret-alice" });
    assert.ok(plain.seen.length > 0);
    assert.ok(
      plain.seen.every((request) => request.headers["x-user"] === undefined),
      "a backend without subjectHeader never gets one",
    );
  });
});
