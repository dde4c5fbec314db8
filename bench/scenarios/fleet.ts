// Scenario "fleet": what a backend of a fleet costs. Two taskgates (each its own process), started
// in the same run: one with 1 backend, one with BENCH_FLEET_BACKENDS backends (every other one a
// stdio server started by taskgate — server-filesystem on a temporary directory —, the rest HTTP
// backends on one example legacy server, each with its own sessions), both with a federated
// endpoint. Measured, as ratios 50 : 1:
//   start-up    spawn → listening, and spawn → /readyz 200 (every backend answered its first ping)
//   memory      taskgate's RSS once idle (after a GC): (RSS at 50 − RSS at 1) / 49 per backend;
//               the stdio servers' own RSS apart (/proc, Linux)
//   routing     tools/call greet on /mcp/b0 (an HTTP backend) at 1 vs 50 backends, interleaved, and
//               the same call through the federated endpoint (b0__greet)

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Child, spawnRole } from "../lib/children.js";
import { onCleanup } from "../lib/cleanup.js";
import { gatewayLogLevel, positiveInt } from "../lib/knobs.js";
import { rpc } from "../lib/modernClient.js";
import { rssOf } from "../lib/processMemory.js";
import { fixed, mib, ratio, summarise, table } from "../lib/stats.js";
import { setPhase } from "../lib/watchdog.js";
import { out, type Scenario } from "./scenario.js";

const FILESYSTEM = join(process.cwd(), "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");

interface Started {
  gateway: Child;
  base: string;
  listeningMs: number;
  readyMs: number;
}

function fleetConfig(count: number, upstreamUrl: string, dir: string) {
  const backends: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) {
    // b0 is always HTTP (the routed call goes there); every odd one is stdio.
    backends[`b${i}`] = i % 2 === 1 ? { command: [process.execPath, FILESYSTEM, dir], initializeTimeoutMs: 60_000 } : { url: upstreamUrl };
  }
  return { host: "127.0.0.1", port: 0, auth: { mode: "demo" }, backends, federation: {} };
}

async function startFleet(count: number, upstreamUrl: string, dir: string, readyLimitMs: number): Promise<Started> {
  const started = performance.now();
  const gateway = await spawnRole(`taskgate-${count}`, "gateway.ts", {
    args: { config: fleetConfig(count, upstreamUrl, dir), logLevel: gatewayLogLevel() },
    exposeGc: true,
  });
  const listeningMs = performance.now() - started;
  const base = new URL(gateway.info.url as string).origin;
  for (;;) {
    const response = await fetch(`${base}/readyz`);
    await response.arrayBuffer();
    if (response.status === 200) break;
    if (performance.now() - started > readyLimitMs) throw new Error(`${count} backends were not all ready within ${readyLimitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { gateway, base, listeningMs, readyMs: performance.now() - started };
}

async function greetMs(url: string, name: string): Promise<number> {
  const start = performance.now();
  const result = await rpc(url, "tools/call", { name, arguments: { name: "bench" } });
  const content = result.content as Array<{ text?: string }> | undefined;
  if (content?.[0]?.text !== "Hello, bench!") throw new Error(`${name} on ${url}: unexpected ${JSON.stringify(result).slice(0, 200)}`);
  return performance.now() - start;
}

export function fleetScenario(): Scenario {
  const BACKENDS = positiveInt("BENCH_FLEET_BACKENDS", 50);
  const CALLS = positiveInt("BENCH_FLEET_CALLS", 400);
  return {
    name: "fleet",
    title: "a fleet: start-up, idle memory per backend, routing overhead at 1 vs many backends",
    sizes: () => `1 vs ${BACKENDS} backends (half stdio: server-filesystem; half HTTP on one example server), ${CALLS} calls each`,
    budgetMs: () => 180_000 + BACKENDS * 3_000,
    async run() {
      const dir = mkdtempSync(join(tmpdir(), "taskgate-bench-fleet-"));
      onCleanup(`temporary directory ${dir}`, async () => rmSync(dir, { recursive: true, force: true }));
      setPhase("starting the example legacy server");
      const upstream = await spawnRole("upstream", "upstream.ts");
      const upstreamUrl = upstream.info.url as string;

      setPhase("starting taskgate with 1 backend");
      const one = await startFleet(1, upstreamUrl, dir, 60_000);
      setPhase(`starting taskgate with ${BACKENDS} backends`);
      const many = await startFleet(BACKENDS, upstreamUrl, dir, 120_000 + BACKENDS * 2_000);

      setPhase("warming up");
      for (const fleet of [one, many]) for (let i = 0; i < 20; i++) await greetMs(`${fleet.base}/mcp/b0`, "greet");
      for (let i = 0; i < 20; i++) await greetMs(`${many.base}/mcp`, "b0__greet");

      setPhase("idle memory");
      const [memOne, memMany] = await Promise.all([one.gateway.mem(), many.gateway.mem()]);
      const pids = await many.gateway.ask<number[]>("upstreamProcesses");
      const stdioRss = pids.map(rssOf).filter((rss) => rss > 0);

      setPhase(`${CALLS} routed calls each, interleaved`);
      const atOne: number[] = [];
      const atMany: number[] = [];
      const federated: number[] = [];
      for (let i = 0; i < CALLS; i++) {
        atOne.push(await greetMs(`${one.base}/mcp/b0`, "greet"));
        atMany.push(await greetMs(`${many.base}/mcp/b0`, "greet"));
        federated.push(await greetMs(`${many.base}/mcp`, "b0__greet"));
      }

      const s = summarise;
      const perBackend = (memMany.rss - memOne.rss) / Math.max(1, BACKENDS - 1);
      out(
        table(
          ["", "1 backend", `${BACKENDS} backends`, "ratio"],
          [
            ["spawn → listening (ms)", fixed(one.listeningMs, 0), fixed(many.listeningMs, 0), ratio(many.listeningMs / one.listeningMs)],
            ["spawn → /readyz 200 (ms)", fixed(one.readyMs, 0), fixed(many.readyMs, 0), ratio(many.readyMs / one.readyMs)],
            ["taskgate RSS, idle after GC", mib(memOne.rss), mib(memMany.rss), ratio(memMany.rss / memOne.rss)],
            ["taskgate heap used", mib(memOne.heapUsed), mib(memMany.heapUsed), ratio(memMany.heapUsed / memOne.heapUsed)],
            ["greet on /mcp/b0, p50 (ms)", fixed(s(atOne).p50, 2), fixed(s(atMany).p50, 2), ratio(s(atMany).p50 / s(atOne).p50)],
            ["greet on /mcp/b0, p95 (ms)", fixed(s(atOne).p95, 2), fixed(s(atMany).p95, 2), ratio(s(atMany).p95 / s(atOne).p95)],
            ["b0__greet federated, p50 (ms)", "", fixed(s(federated).p50, 2), `${ratio(s(federated).p50 / s(atMany).p50)} of /mcp/b0`],
          ],
        ),
      );
      out(
        `idle memory per backend (taskgate only): ${mib(perBackend)}; ${pids.length} stdio server processes, ` +
          `${mib(s(stdioRss).p50)} RSS each (p50), ${mib(stdioRss.reduce((a, b) => a + b, 0))} together`,
      );
      const expectedProcesses = Math.floor(BACKENDS / 2);
      if (pids.length < expectedProcesses) throw new Error(`expected at least ${expectedProcesses} stdio processes, saw ${pids.length}`);
    },
  };
}
