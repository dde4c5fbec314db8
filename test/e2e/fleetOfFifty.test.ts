// Fifty backends on one taskgate, HTTP and stdio mixed, start, serve and stop cleanly: 25 HTTP
// backends on one real example legacy server (each with its own sessions there) and 25 stdio
// backends, each a real server-filesystem process taskgate starts. Shown: /readyz reaches 200 with
// one check per backend, every backend answers a call on its own path, the federated catalog holds
// every backend's tools, and once taskgate has closed none of the processes it started is left.
// What they cost (start-up, memory, routing at 1 vs 50) is measured by `npm run bench -- fleet`.
// Run: node --import tsx --test test/e2e/fleetOfFifty.test.ts

import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import { ConfigSchema } from "../../src/config/schema.js";
import { type Gateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/observability/logger.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { resultOf, rpc } from "../support/mcpClient.js";
import { STDIO_COMMANDS } from "../support/servers/thirdParty.js";
import { until } from "../support/waiting.js";

const COUNT = 50;
/** How long 25 stdio servers may take to start on a loaded machine before /readyz must be 200. */
const READY_WITHIN_MS = 120_000;
const names = Array.from({ length: COUNT }, (_, i) => `b${i}`);
const isStdio = (i: number) => i % 2 === 1;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe(`${COUNT} backends on one taskgate, HTTP and stdio mixed`, () => {
  let legacy: LegacyServer;
  let dir: string;
  let gateway: Gateway;
  let base: string;

  before(async () => {
    legacy = await startLegacyServer({ port: 0, speed: 20 });
    dir = realpathSync(mkdtempSync(join(tmpdir(), "taskgate-fifty-")));
    writeFileSync(join(dir, "here.txt"), "one of fifty\n");
    const backends = Object.fromEntries(
      names.map((name, i) => [
        name,
        isStdio(i) ? { command: STDIO_COMMANDS.filesystem(dir), initializeTimeoutMs: 60_000 } : { url: legacy.url },
      ]),
    );
    const config = ConfigSchema.parse({ port: 0, auth: { mode: "demo" }, shutdown: { graceMs: 0 }, backends, federation: {} });
    gateway = await startGateway(config, { log: createLogger(process.env.TEST_LOG_LEVEL ?? "silent") });
    base = `http://127.0.0.1:${gateway.port}`;
  });
  after(async () => {
    await gateway?.close();
    await legacy?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("/readyz reaches 200 with one check per backend", async () => {
    const body = await until(READY_WITHIN_MS, "/readyz 200", async () => {
      const response = await fetch(`${base}/readyz`);
      return response.status === 200 ? ((await response.json()) as { checks: Record<string, { ok: boolean }> }) : undefined;
    });
    assert.equal(Object.keys(body.checks).filter((check) => check.startsWith("backend:")).length, COUNT);
    assert.ok(Object.values(body.checks).every((check) => check.ok));
  });

  test("every backend answers on its own path; the federated catalog holds every backend's tools", async () => {
    const answers = await Promise.all(
      names.map((name, i) =>
        isStdio(i)
          ? rpc(`${base}/mcp/${name}`, "tools/call", { name: "read_text_file", arguments: { path: join(dir, "here.txt") } })
          : rpc(`${base}/mcp/${name}`, "tools/call", { name: "greet", arguments: { name } }),
      ),
    );
    answers.forEach((reply, i) => {
      const text = JSON.stringify(resultOf(reply)?.content ?? reply.message);
      assert.match(text, isStdio(i) ? /one of fifty/ : new RegExp(`Hello, b${i}!`), `b${i}`);
    });
    const tools = (resultOf(await rpc(`${base}/mcp`, "tools/list", {})).tools as JsonObject[]).map((tool) => tool.name as string);
    for (const name of names)
      assert.ok(
        tools.some((tool) => tool.startsWith(`${name}__`)),
        `${name}'s tools are federated`,
      );
  });

  test("closing taskgate leaves none of the processes it started", async () => {
    const pids = gateway.upstreamProcesses?.() ?? [];
    assert.ok(pids.length >= COUNT / 2, `a process per stdio backend at least (${pids.length})`);
    await gateway.close();
    assert.deepEqual(
      pids.filter((pid) => alive(pid)),
      [],
      "no server process outlives taskgate",
    );
  });
});
