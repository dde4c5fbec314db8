// One backend's trouble stays its own: two example legacy servers as real processes behind one
// fleet (`down` and `up`). Killing `down` (SIGKILL) fails only its calls, with an error naming it;
// /readyz and /metrics say which backend; the federated catalog leaves it out and says so; `up`
// serves throughout; started again on the same port, `down` serves again without a restart of
// taskgate. A backend marked `required: false` is reported but leaves the instance ready.
// Run: node --import tsx --test test/e2e/fleetFaults.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConfigSchema } from "../../src/config/schema.js";
import { type Gateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/observability/logger.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { errorOf, resultOf, rpc } from "../support/mcpClient.js";
import { scrape } from "../support/metrics.js";
import { LegacyProcess } from "../support/servers/legacyProcess.js";

const greet = (url: string) => rpc(url, "tools/call", { name: "greet", arguments: { name: "fleet" } });

async function readyz(base: string): Promise<{ status: number; body: { checks: Record<string, { ok: boolean; error?: string }> } }> {
  const response = await fetch(`${base}/readyz`);
  return { status: response.status, body: (await response.json()) as { checks: Record<string, { ok: boolean; error?: string }> } };
}

async function until<T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("a fleet with one backend killed", () => {
  let down: LegacyProcess;
  let up: LegacyProcess;
  let spare: LegacyProcess;
  let gateway: Gateway;
  let base: string;

  before(async () => {
    [down, up, spare] = await Promise.all([
      LegacyProcess.start({ speed: 20 }),
      LegacyProcess.start({ speed: 20 }),
      LegacyProcess.start({ speed: 20 }),
    ]);
    const config = ConfigSchema.parse({
      port: 0,
      auth: { mode: "demo" },
      shutdown: { graceMs: 0 },
      backends: {
        down: { url: down.url, requestTimeoutMs: 3_000, connectTimeoutMs: 1_000 },
        up: { url: up.url },
        spare: { url: spare.url, required: false },
      },
      federation: {},
    });
    gateway = await startGateway(config, { log: createLogger(process.env.TEST_LOG_LEVEL ?? "silent") });
    base = `http://127.0.0.1:${gateway.port}`;
  });
  after(async () => {
    await gateway?.close();
    await Promise.all([down?.close(), up?.close(), spare?.close()]);
  });

  test("before: every backend answers and the instance is ready", async () => {
    for (const name of ["down", "up", "spare"]) assert.match(JSON.stringify(resultOf(await greet(`${base}/mcp/${name}`))), /Hello, fleet!/);
    const ready = await readyz(base);
    assert.equal(ready.status, 200, JSON.stringify(ready.body));
    assert.deepEqual(Object.keys(ready.body.checks).sort(), ["backend:down", "backend:spare", "backend:up", "store"]);
  });

  test("killed: its calls fail naming it, the others serve, /readyz and /metrics say which, the catalog leaves it out", async () => {
    await down.kill();
    const failed = await greet(`${base}/mcp/down`);
    const error = errorOf(failed);
    assert.ok(error, JSON.stringify(failed.message));
    assert.match(error.message, /^backend 'down': /);
    assert.equal(error.data?.backend, "down");
    assert.equal(error.data?.reason, "upstream_unreachable");
    assert.equal(failed.status, 502);
    assert.match(JSON.stringify(resultOf(await greet(`${base}/mcp/up`))), /Hello, fleet!/);
    const viaFederation = await rpc(`${base}/mcp`, "tools/call", { name: "up__greet", arguments: { name: "fleet" } });
    assert.match(JSON.stringify(resultOf(viaFederation)), /Hello, fleet!/);

    const ready = await readyz(base);
    assert.equal(ready.status, 503);
    assert.equal(ready.body.checks["backend:down"]?.ok, false);
    assert.equal(ready.body.checks["backend:up"]?.ok, true);

    const metrics = await scrape(`${base}/mcp`);
    assert.ok(metrics.sum("taskgate_upstream_errors_total", { backend: "down", reason: "upstream_unreachable" }) >= 1);
    assert.equal(metrics.sum("taskgate_upstream_errors_total", { backend: "up" }), 0);
    assert.ok(metrics.sum("taskgate_requests_total", { backend: "up" }) >= 1, "the live backend's requests are counted under its label");

    const listed = resultOf(await rpc(`${base}/mcp`, "tools/list", {}));
    const names = (listed.tools as JsonObject[]).map((tool) => tool.name as string);
    assert.ok(names.includes("up__greet") && !names.some((name) => name.startsWith("down__")), names.join(", "));
    const missing = (listed._meta as JsonObject)["io.taskgate/missingBackends"] as JsonObject[];
    assert.deepEqual(
      missing.map((entry) => entry.backend),
      ["down"],
    );
    const federatedCall = errorOf(await rpc(`${base}/mcp`, "tools/call", { name: "down__greet", arguments: { name: "x" } }));
    assert.match(federatedCall?.message ?? "", /backend 'down'/);
  });

  test("a backend marked required: false is reported but leaves the instance ready", async () => {
    await down.restart();
    await until(
      "down to answer again",
      () => greet(`${base}/mcp/down`),
      (reply) => reply.message.result !== undefined,
    );
    await spare.kill();
    const ready = await until(
      "readyz to see spare down",
      () => readyz(base),
      (answer) => answer.body.checks["backend:spare"]?.ok === false,
    );
    assert.equal(ready.status, 200, JSON.stringify(ready.body));
    assert.equal((ready.body.checks["backend:spare"] as { required?: boolean }).required, false);
  });

  test("started again on the same port, it serves again by itself and the instance is ready", async () => {
    await spare.restart();
    await until(
      "spare to answer again",
      () => greet(`${base}/mcp/spare`),
      (reply) => reply.message.result !== undefined,
    );
    const ready = await until(
      "readyz 200 with every backend",
      () => readyz(base),
      (answer) => Object.values(answer.body.checks).every((check) => check.ok),
    );
    assert.equal(ready.status, 200);
    const names = ((resultOf(await rpc(`${base}/mcp`, "tools/list", {})).tools as JsonObject[]) ?? []).map((tool) => tool.name as string);
    assert.ok(names.includes("down__greet") && names.includes("spare__greet"));
  });
});
