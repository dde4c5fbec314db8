// Scenario "tasks": the task machinery per request, against the cheapest request on the same
// stack (the bench that came before issue 14, now with taskgate and the upstream in their own
// processes). Each round sends three sequential requests:
//   discover   server/discover (answered from the cached upstream initialize): the baseline
//   call→task  tools/call slow_echo (configured "always"; one-hour upstream call) → CreateTaskResult
//   tasks/get  tasks/get on the task just created (status "working"), sent once the upstream has
//              started the call, so the upstream's own work on the new call is not counted
// BENCH_N measured rounds after BENCH_WARMUP; store BENCH_STORE. Every task is cancelled at the
// end (tasks/cancel ⇒ notifications/cancelled upstream) and taskgate must then hold none.

import { cpuMs } from "../lib/children.js";
import { positiveInt } from "../lib/knobs.js";
import { cancelTask, createSlowTask, discover, getWorkingTask } from "../lib/modernClient.js";
import { startStack } from "../lib/stack.js";
import { fixed, ratio, summarise, table } from "../lib/stats.js";
import { setPhase } from "../lib/watchdog.js";
import { out, type Scenario } from "./scenario.js";

const SLOW_MS = 3_600_000;

export function tasksScenario(): Scenario {
  const N = positiveInt("BENCH_N", 300);
  const WARMUP = positiveInt("BENCH_WARMUP", 30);
  return {
    name: "tasks",
    title: "task machinery per request: call→task and tasks/get vs server/discover",
    sizes: () => `${N} measured rounds after ${WARMUP} warm-up, one request of each case per round`,
    budgetMs: () => 60_000 + (N + WARMUP) * 300,
    async run() {
      setPhase("starting upstream and taskgate");
      const stack = await startStack();
      const samples = { discover: [] as number[], "call→task": [] as number[], "tasks/get": [] as number[] };
      const taskIds: string[] = [];
      const timed = async (fn: () => Promise<unknown>) => {
        const start = performance.now();
        await fn();
        return performance.now() - start;
      };
      const cpuBefore = await stack.gateway.cpu();
      const started = performance.now();
      for (let round = 0; round < WARMUP + N; round++) {
        setPhase(`round ${round + 1} of ${WARMUP + N}`);
        const tDiscover = await timed(() => discover(stack.url));
        let taskId = "";
        const tCall = await timed(async () => {
          taskId = await createSlowTask(stack.url, SLOW_MS);
        });
        taskIds.push(taskId);
        await stack.upstream.ask("waitStarted", { count: taskIds.length, ms: 10_000 });
        const tGet = await timed(() => getWorkingTask(stack.url, taskId));
        if (round >= WARMUP) {
          samples.discover.push(tDiscover);
          samples["call→task"].push(tCall);
          samples["tasks/get"].push(tGet);
        }
      }
      const roundsMs = performance.now() - started;
      const roundCpuMs = cpuMs(cpuBefore, await stack.gateway.cpu()) / (WARMUP + N);

      setPhase(`cancelling ${taskIds.length} tasks`);
      const cancelStart = performance.now();
      for (const taskId of taskIds) await cancelTask(stack.url, taskId);
      const cancelMs = performance.now() - cancelStart;

      const base = summarise(samples.discover);
      out(`times in ms, client-side (fetch, keep-alive); ratios against server/discover`);
      out(
        table(
          ["case", "p50", "p95", "mean", "p50/base", "mean/base"],
          Object.entries(samples).map(([name, values]) => {
            const s = summarise(values);
            return [name, fixed(s.p50), fixed(s.p95), fixed(s.mean), ratio(s.p50 / base.p50), ratio(s.mean / base.mean)];
          }),
        ),
      );
      out(
        `${taskIds.length} tasks created in ${(roundsMs / 1000).toFixed(1)} s (with warm-up; taskgate CPU ${fixed(roundCpuMs)} ms per round of three), ` +
          `all cancelled in ${(cancelMs / 1000).toFixed(1)} s`,
      );
      const held = await stack.gateway.ask<number>("held");
      if (held !== 0) throw new Error(`taskgate still holds ${held} task(s) after tasks/cancel`);
    },
  };
}
