// Scenario "tasks-get": what one tasks/get costs the server, in CPU per request, against
//   floor     a bare node:http handler doing the same real work (bench/roles/floor.ts)
//   v2 peer   a native 2026-07-28 server on the official v2 SDK answering tasks/get as an
//             extension method with the same lookup (bench/roles/v2Peer.ts)
//   taskgate  tasks/get on working tasks it holds (slow_echo configured "always"), store BENCH_STORE
// Each server holds BENCH_GET_TASKS working tasks of the same owner and gets requests cycling
// over them: per round and server a block of BENCH_GET_CALLS sequential requests, then one of as
// many with BENCH_GET_CONCURRENCY (64) in flight; each round orders the servers its own way
// (shuffled, the round as seed). CPU is process.cpuUsage() of the server's own process across
// each block; latency is client-side. The client is undici's request() (lean, so the servers,
// not the client, are the bottleneck).
// Sequential CPU includes each request's fixed wake-up cost (epoll, syscalls, context switches);
// with many in flight a busy server shares that cost, so that figure is the per-request work and
// the one the goal is checked on.

import { type Child, cpuMs, spawnRole } from "../lib/children.js";
import { positiveInt } from "../lib/knobs.js";
import { runBlock, shuffle } from "../lib/load.js";
import { BENCH_SUBJECT, cancelTask, createSlowTask, leanGetWorkingTask } from "../lib/modernClient.js";
import { startStack } from "../lib/stack.js";
import { fixed, goalLine, median, ratio, summarise, table } from "../lib/stats.js";
import { setPhase } from "../lib/watchdog.js";
import { out, type Scenario } from "./scenario.js";

/** Long enough that no task finishes during the run; all are cancelled at the end. */
const SLOW_MS = 3_600_000;

interface Server {
  label: string;
  child: Child;
  url: string;
  ids: string[];
  latencies: number[];
  cpuMs: number;
  calls: number;
  concCpuMs: number;
  concCalls: number;
  concRates: number[];
}

export function tasksGetScenario(): Scenario {
  const ROUNDS = positiveInt("BENCH_ROUNDS", 8);
  const CALLS = positiveInt("BENCH_GET_CALLS", 300);
  const TASKS = positiveInt("BENCH_GET_TASKS", 100);
  const WARMUP = positiveInt("BENCH_WARMUP", 100);
  const CONCURRENCY = positiveInt("BENCH_GET_CONCURRENCY", 64);
  return {
    name: "tasks-get",
    title: "tasks/get CPU per request: taskgate vs a bare node:http floor vs a native v2-SDK peer",
    sizes: () =>
      `${ROUNDS} rounds × (${CALLS} sequential + ${CALLS} at ${CONCURRENCY} in flight) tasks/get per server over ${TASKS} working tasks, ${WARMUP} warm-up`,
    budgetMs: () => 90_000 + ROUNDS * 3 * CALLS * 30 + TASKS * 100,
    async run() {
      setPhase("starting taskgate, floor and v2 peer");
      const stack = await startStack();
      const floor = await spawnRole("floor", "floor.ts");
      const peer = await spawnRole("v2peer", "v2Peer.ts");

      setPhase(`creating ${TASKS} working tasks in taskgate`);
      const taskgateIds: string[] = [];
      for (let i = 0; i < TASKS; i++) taskgateIds.push(await createSlowTask(stack.url, SLOW_MS));
      await stack.upstream.ask("waitStarted", { count: TASKS, ms: 30_000 });
      const servers: Server[] = [
        {
          label: "floor (node:http)",
          child: floor,
          url: floor.info.url as string,
          ids: await floor.ask<string[]>("seed", { count: TASKS, subject: BENCH_SUBJECT }),
        },
        {
          label: "v2 SDK peer",
          child: peer,
          url: peer.info.url as string,
          ids: await peer.ask<string[]>("seed", { count: TASKS, subject: BENCH_SUBJECT }),
        },
        { label: "taskgate", child: stack.gateway, url: stack.url, ids: taskgateIds },
      ].map((s) => ({ ...s, latencies: [], cpuMs: 0, calls: 0, concCpuMs: 0, concCalls: 0, concRates: [] }));

      const get = (server: Server) => (i: number) => leanGetWorkingTask(server.url, server.ids[i % server.ids.length]!);
      setPhase("warming up");
      for (const server of servers) await runBlock(WARMUP, 1, get(server));
      for (let round = 0; round < ROUNDS; round++) {
        for (const server of shuffle(servers, round)) {
          setPhase(`round ${round + 1}/${ROUNDS}, ${server.label}`);
          const before = await server.child.cpu();
          const block = await runBlock(CALLS, 1, get(server));
          const between = await server.child.cpu();
          const concurrent = await runBlock(CALLS, CONCURRENCY, get(server));
          const after = await server.child.cpu();
          server.latencies.push(...block.latencies);
          server.cpuMs += cpuMs(before, between);
          server.calls += CALLS;
          server.concCpuMs += cpuMs(between, after);
          server.concCalls += CALLS;
          server.concRates.push((CALLS / concurrent.elapsedMs) * 1000);
        }
      }
      for (const server of servers.slice(0, 2)) {
        const stats = await server.child.ask<{ errors: number }>("stats");
        if (stats.errors > 0) throw new Error(`${server.label} answered ${stats.errors} request(s) with an error`);
      }

      const [floorServer, , taskgate] = servers as [Server, Server, Server];
      const floorCpu = floorServer.cpuMs / floorServer.calls;
      const floorConcCpu = floorServer.concCpuMs / floorServer.concCalls;
      const floorP50 = summarise(floorServer.latencies).p50;
      out(
        table(
          [
            "server",
            "CPU ms/req seq",
            "/floor",
            `CPU ms/req ${CONCURRENCY} in flight`,
            "/floor",
            "req/s",
            "p50 ms seq",
            "p95 ms",
            "p50/floor",
          ],
          servers.map((s) => {
            const lat = summarise(s.latencies);
            const cpu = s.cpuMs / s.calls;
            const concCpu = s.concCpuMs / s.concCalls;
            return [
              s.label,
              fixed(cpu, 4),
              ratio(cpu / floorCpu),
              fixed(concCpu, 4),
              ratio(concCpu / floorConcCpu),
              median(s.concRates).toFixed(0),
              fixed(lat.p50),
              fixed(lat.p95),
              ratio(lat.p50 / floorP50),
            ];
          }),
        ),
      );
      const seqRatio = taskgate.cpuMs / taskgate.calls / floorCpu;
      const concRatio = taskgate.concCpuMs / taskgate.concCalls / floorConcCpu;
      out(`taskgate tasks/get CPU / floor, sequential (with the per-request wake-up cost): ${ratio(seqRatio)}`);
      const extra = taskgate.concCpuMs / taskgate.concCalls - floorConcCpu;
      out(`taskgate's CPU beyond the floor's per tasks/get (${CONCURRENCY} in flight): ${fixed(extra, 4)} ms`);
      out(goalLine(`taskgate tasks/get CPU / floor (${CONCURRENCY} in flight)`, concRatio, ratio(concRatio), { kind: "atMost", limit: 2 }));

      setPhase(`cancelling ${TASKS} tasks`);
      for (const id of taskgateIds) await cancelTask(stack.url, id);
    },
  };
}
