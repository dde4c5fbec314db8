// Scenario "stdio": what a stdio upstream costs (issue 13). taskgate (its own process) runs
// server-everything in stdio mode, one process per identity:
//   start-up   BENCH_STDIO_STARTS identities one after another: each first call (process started,
//              initialize, tools/call echo) against the same identity's second call (warm); the
//              difference is the start-up a new identity pays
//   per process RSS of each server process (/proc/<pid>/status VmRSS) once it served its call
//   at once    BENCH_STDIO_IDENTITIES identities calling together (one process each): wall time,
//              per-call p50/p95/max, processes running, their summed RSS, taskgate's own RSS
// Baseline: the same server started directly by the SDK's StdioClientTransport (spawn, initialize).
// Linux only for RSS (reads /proc).

import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { spawnRole } from "../lib/children.js";
import { gatewayLogLevel, positiveInt } from "../lib/knobs.js";
import { rpc } from "../lib/modernClient.js";
import { rssOf } from "../lib/processMemory.js";
import { fixed, mib, summarise, table } from "../lib/stats.js";
import { setPhase } from "../lib/watchdog.js";
import { out, type Scenario } from "./scenario.js";

const EVERYTHING = join(process.cwd(), "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const COMMAND = [process.execPath, EVERYTHING, "stdio"];

async function echo(url: string, token: string): Promise<number> {
  const start = performance.now();
  const result = await rpc(url, "tools/call", { name: "echo", arguments: { message: token } }, { token });
  if (!JSON.stringify(result).includes(token)) throw new Error(`echo for ${token}: unexpected ${JSON.stringify(result).slice(0, 200)}`);
  return performance.now() - start;
}

export function stdioScenario(): Scenario {
  const STARTS = positiveInt("BENCH_STDIO_STARTS", 10);
  const IDENTITIES = positiveInt("BENCH_STDIO_IDENTITIES", 50);
  return {
    name: "stdio",
    title: "stdio upstream: process start-up, RSS per process, many identities at once",
    sizes: () => `${STARTS} sequential first calls, ${IDENTITIES} identities at once (server-everything stdio)`,
    budgetMs: () => 120_000 + (STARTS + IDENTITIES) * 2_000,
    async run() {
      setPhase("direct baseline: the SDK's StdioClientTransport");
      const direct: number[] = [];
      const directRss: number[] = [];
      for (let i = 0; i < Math.min(STARTS, 5); i++) {
        const start = performance.now();
        const transport = new StdioClientTransport({ command: COMMAND[0] as string, args: COMMAND.slice(1), stderr: "ignore" });
        const client = new Client({ name: "bench", version: "1" });
        await client.connect(transport);
        direct.push(performance.now() - start);
        if (transport.pid) directRss.push(rssOf(transport.pid));
        await client.close();
      }

      setPhase("starting taskgate with upstream.command");
      const config = {
        upstream: { command: COMMAND, maxProcesses: IDENTITIES + STARTS + 5, initializeTimeoutMs: 60_000 },
        host: "127.0.0.1",
        port: 0,
        auth: { mode: "demo" },
      };
      const gateway = await spawnRole("taskgate", "gateway.ts", { args: { config, logLevel: gatewayLogLevel() } });
      const url = gateway.info.url as string;
      await echo(url, "warm-up");

      setPhase(`${STARTS} identities one after another`);
      const first: number[] = [];
      const warm: number[] = [];
      for (let i = 0; i < STARTS; i++) {
        first.push(await echo(url, `seq-${i}`));
        warm.push(await echo(url, `seq-${i}`));
      }
      const pidsSeq = await gateway.ask<number[]>("upstreamProcesses");
      const rssSeq = pidsSeq.map(rssOf).filter((rss) => rss > 0);

      setPhase(`${IDENTITIES} identities at once`);
      const before = new Set(pidsSeq);
      const started = performance.now();
      const together = await Promise.all(Array.from({ length: IDENTITIES }, (_, i) => echo(url, `many-${i}`)));
      const wallMs = performance.now() - started;
      const pids = (await gateway.ask<number[]>("upstreamProcesses")).filter((pid) => !before.has(pid));
      const rssMany = pids.map(rssOf).filter((rss) => rss > 0);
      const gatewayMem = await gateway.mem();

      const s = (values: number[]) => summarise(values);
      out("times in ms, client-side");
      out(
        table(
          ["case", "n", "p50", "p95", "max"],
          [
            [
              "direct: spawn + initialize (SDK)",
              String(direct.length),
              fixed(s(direct).p50, 1),
              fixed(s(direct).p95, 1),
              fixed(Math.max(...direct), 1),
            ],
            [
              "taskgate: first call of an identity",
              String(first.length),
              fixed(s(first).p50, 1),
              fixed(s(first).p95, 1),
              fixed(Math.max(...first), 1),
            ],
            [
              "taskgate: next call (warm process)",
              String(warm.length),
              fixed(s(warm).p50, 1),
              fixed(s(warm).p95, 1),
              fixed(Math.max(...warm), 1),
            ],
            [
              `taskgate: ${IDENTITIES} identities at once, each`,
              String(together.length),
              fixed(s(together).p50, 1),
              fixed(s(together).p95, 1),
              fixed(Math.max(...together), 1),
            ],
          ],
        ),
      );
      out(`start-up a new identity pays (first − warm, p50): ${fixed(s(first).p50 - s(warm).p50, 1)} ms`);
      out(
        `RSS per server process: direct ${mib(s(directRss).p50)} (p50); through taskgate ${mib(s(rssSeq).p50)} p50, ${mib(Math.max(...rssSeq))} max (${rssSeq.length} processes)`,
      );
      out(
        `${IDENTITIES} identities at once: all complete in ${fixed(wallMs, 0)} ms; ${pids.length} new processes, ` +
          `${mib(rssMany.reduce((a, b) => a + b, 0))} RSS together (${mib(s(rssMany).p50)} each, p50); taskgate itself ${mib(gatewayMem.rss)} RSS`,
      );
      if (pids.length !== IDENTITIES) throw new Error(`expected ${IDENTITIES} new processes, saw ${pids.length}`);
    },
  };
}
