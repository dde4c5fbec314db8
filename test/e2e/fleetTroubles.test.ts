// One backend's trouble stays its own, for the troubles other than a killed server (fleetFaults):
// a backend that is slow (a live port that never answers: test/support/servers/blackhole.ts,
// "silent") and one that refuses taskgate's credentials (our proxy answering 401 in front of a real
// example legacy server), beside a real example legacy server that works. Each troubled backend's
// calls fail naming it (reason and backend in data) within its own limits; the working backend
// answers meanwhile, on its path and through the federated endpoint; the federated catalog leaves
// the two out and says why; /readyz names both and /metrics counts their errors under their label.
// Run: node --import tsx --test test/e2e/fleetTroubles.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import { ConfigSchema } from "../../src/config/schema.js";
import { type Gateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/observability/logger.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { errorOf, type RpcReply, resultOf, rpc } from "../support/mcpClient.js";
import { scrape } from "../support/metrics.js";
import { type Blackhole, startBlackhole } from "../support/servers/blackhole.js";
import { type CountingProxy, startCountingProxy } from "../support/servers/countingProxy.js";

const greet = (url: string, name = "greet") => rpc(url, "tools/call", { name, arguments: { name: "fleet" } });
/** The slow backend's limits: its calls fail within these, never the others'. */
const SLOW = { connectTimeoutMs: 1_000, initializeTimeoutMs: 4_000, requestTimeoutMs: 4_000, pingTimeoutMs: 2_000 };

describe("a slow backend and one that refuses credentials stay their own trouble", () => {
  let works: LegacyServer;
  let locked: LegacyServer;
  let proxy: CountingProxy;
  let hole: Blackhole;
  let gateway: Gateway;
  let base: string;

  before(async () => {
    [works, locked, hole] = await Promise.all([
      startLegacyServer({ port: 0, speed: 20 }),
      startLegacyServer({ port: 0, speed: 20 }),
      startBlackhole("silent"),
    ]);
    proxy = await startCountingProxy(locked.url, { refuse: () => 401 });
    const config = ConfigSchema.parse({
      port: 0,
      auth: { mode: "demo" },
      shutdown: { graceMs: 0 },
      backends: { works: { url: works.url }, slow: { url: hole.url, ...SLOW }, locked: { url: proxy.url } },
      federation: { listTimeoutMs: 2_000 },
    });
    gateway = await startGateway(config, { log: createLogger(process.env.TEST_LOG_LEVEL ?? "silent") });
    base = `http://127.0.0.1:${gateway.port}`;
    // The working backend's session is opened here, so its calls below race nothing but the call itself
    // against the slow backend's limits (a first call's initialize on a loaded machine took seconds).
    resultOf(await greet(`${base}/mcp/works`));
  });
  after(async () => {
    await gateway?.close();
    await Promise.all([works?.close(), locked?.close(), proxy?.close(), hole?.close()]);
  });

  function namedFailure(reply: RpcReply, backend: string): JsonObject {
    const error = errorOf(reply);
    assert.ok(error, JSON.stringify(reply.message));
    assert.match(error.message, new RegExp(`^backend '${backend}': `));
    assert.equal(error.data?.backend, backend);
    return error.data as JsonObject;
  }

  test("while the slow backend's call waits, the working one answers on its path and through the federated endpoint", async () => {
    let slowDone = false;
    const slow = greet(`${base}/mcp/slow`).then((reply) => ((slowDone = true), reply));
    assert.match(JSON.stringify(resultOf(await greet(`${base}/mcp/works`))), /Hello, fleet!/);
    assert.match(JSON.stringify(resultOf(await greet(`${base}/mcp`, "works__greet"))), /Hello, fleet!/);
    assert.equal(slowDone, false, "the working backend answered before the slow one gave up");
    const data = namedFailure(await slow, "slow");
    assert.match(String(data.reason), /^upstream_(timeout|unresponsive|unreachable)$/);
  });

  test("the backend refusing credentials fails its calls naming it (upstream_auth), on its path and federated", async () => {
    assert.equal(namedFailure(await greet(`${base}/mcp/locked`), "locked").reason, "upstream_auth");
    assert.equal(namedFailure(await greet(`${base}/mcp`, "locked__greet"), "locked").reason, "upstream_auth");
    assert.ok(
      proxy.seen.some((seen) => seen.refused === 401),
      "the refusal came from the backend's side",
    );
  });

  test("the federated catalog lists the working backend and names the two it left out, with why", async () => {
    const listed = resultOf(await rpc(`${base}/mcp`, "tools/list", {}));
    const names = (listed.tools as JsonObject[]).map((tool) => tool.name as string);
    assert.ok(names.includes("works__greet"));
    assert.ok(!names.some((name) => name.startsWith("slow__") || name.startsWith("locked__")));
    const missing = (listed._meta as JsonObject)["io.taskgate/missingBackends"] as JsonObject[];
    assert.deepEqual(missing.map((entry) => entry.backend).sort(), ["locked", "slow"]);
    assert.equal(missing.find((entry) => entry.backend === "locked")?.reason, "upstream_auth");
    assert.equal(listed.ttlMs, 0, "a partial list is not to be cached");
  });

  test("/readyz names both troubled backends; /metrics counts their errors under their own label", async () => {
    const response = await fetch(`${base}/readyz`);
    const body = (await response.json()) as { checks: Record<string, { ok: boolean }> };
    assert.equal(response.status, 503, JSON.stringify(body));
    assert.equal(body.checks["backend:works"]?.ok, true);
    assert.equal(body.checks["backend:slow"]?.ok, false);
    assert.equal(body.checks["backend:locked"]?.ok, false);
    const metrics = await scrape(`${base}/mcp`);
    assert.ok(metrics.sum("taskgate_upstream_errors_total", { backend: "locked", reason: "upstream_auth" }) >= 1);
    assert.ok(metrics.sum("taskgate_upstream_errors_total", { backend: "slow" }) >= 1);
    assert.equal(metrics.sum("taskgate_upstream_errors_total", { backend: "works" }), 0);
  });
});
