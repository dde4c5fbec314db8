// Scenario "scale": taskgate holding many tasks at once. Creates working tasks (slow_echo
// configured "always", one hour upstream, so every call stays running) in batches of
// BENCH_SCALE_BATCH with BENCH_CONCURRENCY in flight, up to each level of BENCH_SCALE. At each
// level: the create rate of the batch that reached it, BENCH_SCALE_GETS sequential tasks/get on
// random held tasks (p50/p99), taskgate's RSS and heap after a forced GC (it runs with
// --expose-gc) and per held task, and its TCP connections to the upstream's port (from /proc).
// Then every task is cancelled: time until all tasks/cancel are answered, until the upstream has
// stopped every call, and memory and connections afterwards against the level before the first
// task (both read after BENCH_SETTLE_MS, so idle keep-alive sockets have had time to close).
// The baseline counts nothing from the warm-up: a few tasks made and cancelled, then settled.
// Then the floor, at the top level only: a bare Node process (role streamFloor, --expose-gc)
// opens as many streaming GETs, one undici Client each, to an SSE server in another process
// (role sseServer), aborts them all, and is read the same way — before, held, after settling.
// Node and the allocator keep part of the RSS such a burst grew to; the RSS goal asks taskgate to
// keep no more than that floor does (plus the cancelled records and a margin), not to return to where
// it started. The heap goal reads what cancelling left per task: the record tasks/get still answers.

import { join } from "node:path";
import { type MemUsage, spawnRole } from "../lib/children.js";
import { positiveInt, positiveIntList } from "../lib/knobs.js";
import { runBlock, sleep } from "../lib/load.js";
import { cancelTask, createSlowTask, describeError, discover, getWorkingTask } from "../lib/modernClient.js";
import { type Stack, startStack } from "../lib/stack.js";
import { fixed, goalLine, kib, mib, summarise, table } from "../lib/stats.js";
import { type Connections, connectionsTo, describeConnections, openFileLimit } from "../lib/tcpConnections.js";
import { setPhase } from "../lib/watchdog.js";
import { out, type Scenario } from "./scenario.js";

/** A cancelled task's record in the memory store is ~1.3 KiB of heap; a held call's own state, ~15 KiB. */
const HEAP_KEPT_PER_CANCELLED_KIB = 2;
const WARMUP_TASKS = 20;
/** Warm-up tasks run this long, so they are still working when tasks/get asks. */
const WARMUP_TASK_MS = 500;
const SLOW_MS = 3_600_000;
/** How long the upstream may take to start (or stop) all calls after the last answer. */
const UPSTREAM_WAIT_MS = 60_000;

interface Snapshot {
  mem: MemUsage;
  connections: Connections;
}

interface LevelRow {
  level: number;
  createRate: number;
  createP50: number;
  getP50: number;
  getP99: number;
  /** taskgate's longest event-loop stall while creating the tasks of this level. */
  createLagMs: number;
  snapshot: Snapshot;
}

interface Lag {
  maxMs: number;
  p99Ms: number;
}

export function scaleScenario(): Scenario {
  const LEVELS = positiveIntList("BENCH_SCALE", [1000, 5000, 10_000]);
  const MAX = LEVELS[LEVELS.length - 1]!;
  const BATCH = positiveInt("BENCH_SCALE_BATCH", 500);
  const GETS = positiveInt("BENCH_SCALE_GETS", 1000);
  const CONCURRENCY = positiveInt("BENCH_CONCURRENCY", 16);
  // Long enough for the last socket a burst leaves: an overflow session closes 5 s after its last call
  // (upstream/upstreamPool.ts), and the connection its DELETE used idles 4 s more before it closes.
  const SETTLE_MS = positiveInt("BENCH_SETTLE_MS", 10_000);
  return {
    name: "scale",
    title: `held tasks at scale (${LEVELS.join(" / ")}): create rate, tasks/get, memory, cancel all`,
    sizes: () =>
      `levels ${LEVELS.join(",")}; batches of ${BATCH} creates at ${CONCURRENCY} in flight; ${GETS} tasks/get per level; settle ${SETTLE_MS} ms`,
    // Generous: on today's code and a busy 2-core machine 10k held tasks took over 15 minutes.
    budgetMs: () => 240_000 + MAX * 150 + LEVELS.length * GETS * 20 + 4 * SETTLE_MS,
    async run() {
      const limit = openFileLimit();
      if (limit < MAX + 1000) {
        throw new Error(
          `open-file limit ${limit} is too low for ${MAX} held tasks (taskgate, the upstream, and the floor and its SSE server after them, each hold one socket per call): raise it (ulimit -n) or lower BENCH_SCALE`,
        );
      }
      setPhase("starting upstream and taskgate");
      const stack = await startStack({ exposeGc: true });
      const snapshot = async (): Promise<Snapshot> => ({
        mem: await stack.gateway.mem(),
        connections: connectionsTo(stack.gateway.pid, stack.upstreamPort),
      });

      // Warm-up tasks finish on their own (a cancelled one may leave something behind, which
      // would then count in the baseline).
      setPhase("warming up");
      for (let i = 0; i < 50; i++) await discover(stack.url);
      const warm: string[] = [];
      for (let i = 0; i < WARMUP_TASKS; i++) warm.push(await createSlowTask(stack.url, WARMUP_TASK_MS));
      for (const id of warm) await getWorkingTask(stack.url, id).catch(() => undefined);
      const warmed = await upstreamIdle(stack, UPSTREAM_WAIT_MS);
      if (warmed.running > 0) throw new Error(`${warmed.running} warm-up calls still run upstream after ${UPSTREAM_WAIT_MS} ms`);
      await sleep(SETTLE_MS);
      const before = await snapshot();
      await heapSnapshot(stack, "before");

      const ids: string[] = [];
      const rows: LevelRow[] = [];
      for (const level of LEVELS) {
        let last = { rate: NaN, p50: NaN };
        await stack.gateway.ask("lag");
        while (ids.length < level) {
          const n = Math.min(BATCH, level - ids.length);
          setPhase(`creating tasks (${ids.length} of ${MAX} held)`);
          const block = await runBlock(n, CONCURRENCY, async () => ids.push(await createSlowTask(stack.url, SLOW_MS))).catch(
            async (error: unknown) => {
              const lag = await stack.gateway.ask<Lag>("lag").catch(() => undefined);
              const stalled = lag ? ` (taskgate's event loop stalled up to ${lag.maxMs.toFixed(0)} ms meanwhile)` : "";
              throw new Error(`${describeError(error)}${stalled}`);
            },
          );
          last = { rate: (n / block.elapsedMs) * 1000, p50: summarise(block.latencies).p50 };
        }
        const createLag = await stack.gateway.ask<Lag>("lag");
        setPhase(`waiting for the upstream to run all ${level} calls`);
        await stack.upstream.ask("waitStarted", { count: WARMUP_TASKS + level, ms: UPSTREAM_WAIT_MS }, UPSTREAM_WAIT_MS + 5000);
        setPhase(`tasks/get with ${level} held`);
        const gets = await runBlock(GETS, 1, () => getWorkingTask(stack.url, ids[Math.floor(Math.random() * ids.length)]!));
        const g = summarise(gets.latencies);
        setPhase(`reading memory with ${level} held`);
        const snap = await snapshot();
        if (level === MAX) await heapSnapshot(stack, `held-${level}`);
        rows.push({
          level,
          createRate: last.rate,
          createP50: last.p50,
          getP50: g.p50,
          getP99: g.p99,
          createLagMs: createLag.maxMs,
          snapshot: snap,
        });
        const held = await stack.gateway.ask<number>("held");
        if (held !== level) throw new Error(`taskgate holds ${held} tasks, expected ${level}`);
      }

      setPhase(`cancelling ${ids.length} tasks`);
      const cpuBefore = await stack.gateway.cpu();
      const cancelStart = performance.now();
      await runBlock(ids.length, CONCURRENCY, (i) => cancelTask(stack.url, ids[i]!));
      const cancelMs = performance.now() - cancelStart;
      const cpuAfter = await stack.gateway.cpu();
      // CPU, unlike wall time, does not grow with the machine's load: the figure to compare across runs.
      const cancelCpuMs = (cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system) / 1000 / ids.length;
      setPhase(`waiting for the upstream to stop ${ids.length} cancelled calls`);
      const idle = await upstreamIdle(stack, UPSTREAM_WAIT_MS);
      const upstreamStopMs = performance.now() - cancelStart;
      const heldAfter = await stack.gateway.ask<number>("held");
      setPhase(`settling ${SETTLE_MS} ms after cancelling`);
      await sleep(SETTLE_MS);
      const after = await snapshot();
      await heapSnapshot(stack, "after");

      const floor = await measureFloor(MAX, SETTLE_MS);
      report(
        before,
        rows,
        after,
        { cancelMs, cancelCpuMs, upstreamStopMs, upstreamRunning: idle.running, heldAfter, outcomes: idle.outcomes },
        floor,
      );
    },
  };
}

/** With BENCH_HEAP_SNAPSHOT_DIR: taskgate's heap written there (scale-before, -held-<top level>, -after .heapsnapshot). */
async function heapSnapshot(stack: Stack, when: string): Promise<void> {
  const dir = process.env.BENCH_HEAP_SNAPSHOT_DIR;
  if (!dir) return;
  setPhase(`writing taskgate's heap snapshot (${when})`);
  const file = await stack.gateway.ask<string>("heapSnapshot", join(dir, `scale-${when}.heapsnapshot`), 300_000);
  out(`heap snapshot ${when}: ${file}`);
}

interface Floor {
  streams: number;
  before: MemUsage;
  held: MemUsage;
  after: MemUsage;
}

/** The streamFloor role's memory before, while holding `count` streams, and after releasing them. */
async function measureFloor(count: number, settleMs: number): Promise<Floor> {
  setPhase("floor: starting sseServer and streamFloor");
  const server = await spawnRole("sseServer", "sseServer.ts");
  const floor = await spawnRole("streamFloor", "streamFloor.ts", { exposeGc: true });
  const url = server.info.url as string;
  const serverIdle = async () => {
    const deadline = Date.now() + UPSTREAM_WAIT_MS;
    for (;;) {
      const open = await server.ask<number>("open");
      if (open === 0) return;
      if (Date.now() > deadline)
        throw new Error(`the SSE server still holds ${open} streams ${UPSTREAM_WAIT_MS} ms after the floor released them`);
      await sleep(100);
    }
  };
  // Warmed like taskgate: a few streams opened and released, then settled.
  setPhase("floor: warming up");
  await floor.ask("hold", { url, count: WARMUP_TASKS });
  await floor.ask("release");
  await serverIdle();
  await sleep(settleMs);
  const before = await floor.mem();
  setPhase(`floor: holding ${count} streams`);
  const streams = await floor.ask<number>("hold", { url, count }, UPSTREAM_WAIT_MS * 2);
  const held = await floor.mem();
  setPhase(`floor: releasing ${count} streams`);
  await floor.ask("release", undefined, UPSTREAM_WAIT_MS);
  await serverIdle();
  setPhase(`floor: settling ${settleMs} ms`);
  await sleep(settleMs);
  const after = await floor.mem();
  await Promise.all([floor.stop(), server.stop()]);
  return { streams, before, held, after };
}

interface UpstreamCalls {
  running: number;
  outcomes: Record<string, number>;
}

/** Waits until no tool call runs upstream; returns the last reading (running > 0 if it gave up). */
async function upstreamIdle(stack: Stack, ms: number): Promise<UpstreamCalls> {
  const deadline = Date.now() + ms;
  for (;;) {
    const calls = await stack.upstream.ask<UpstreamCalls>("calls");
    if (calls.running === 0 || Date.now() > deadline) return calls;
    await sleep(100);
  }
}

function report(
  before: Snapshot,
  rows: LevelRow[],
  after: Snapshot,
  end: {
    cancelMs: number;
    cancelCpuMs: number;
    upstreamStopMs: number;
    upstreamRunning: number;
    heldAfter: number;
    outcomes: Record<string, number>;
  },
  floor: Floor,
): void {
  out(
    table(
      [
        "held",
        "creates/s",
        "create p50 ms",
        "loop stall ms",
        "get p50 ms",
        "get p99 ms",
        "RSS",
        "heap",
        "RSS/task",
        "heap/task",
        "conns to upstream",
      ],
      [
        [
          "0 (before)",
          "-",
          "-",
          "-",
          "-",
          "-",
          mib(before.mem.rss),
          mib(before.mem.heapUsed),
          "-",
          "-",
          describeConnections(before.connections),
        ],
        ...rows.map((r) => [
          String(r.level),
          r.createRate.toFixed(0),
          fixed(r.createP50, 1),
          r.createLagMs.toFixed(0),
          fixed(r.getP50),
          fixed(r.getP99),
          mib(r.snapshot.mem.rss),
          mib(r.snapshot.mem.heapUsed),
          kib((r.snapshot.mem.rss - before.mem.rss) / r.level),
          kib((r.snapshot.mem.heapUsed - before.mem.heapUsed) / r.level),
          describeConnections(r.snapshot.connections),
        ]),
        [
          "0 (cancelled)",
          "-",
          "-",
          "-",
          "-",
          "-",
          mib(after.mem.rss),
          mib(after.mem.heapUsed),
          "-",
          "-",
          describeConnections(after.connections),
        ],
      ],
    ),
  );
  const top = rows[rows.length - 1]!;
  const first = rows[0]!;
  out(
    `cancelled ${top.level}: all tasks/cancel answered in ${(end.cancelMs / 1000).toFixed(1)} s (taskgate CPU ${end.cancelCpuMs.toFixed(2)} ms per cancel); ` +
      (end.upstreamRunning === 0
        ? `the upstream had stopped every call after ${(end.upstreamStopMs / 1000).toFixed(1)} s`
        : `${end.upstreamRunning} call(s) still running upstream after ${(end.upstreamStopMs / 1000).toFixed(1)} s`) +
      `; taskgate still holds ${end.heldAfter}; upstream outcomes ${JSON.stringify(end.outcomes)}`,
  );
  out(
    `after cancelling vs before: RSS ${mib(after.mem.rss)} vs ${mib(before.mem.rss)}, heap ${mib(after.mem.heapUsed)} vs ${mib(before.mem.heapUsed)}` +
      ` (kept per cancelled task: RSS ${kib((after.mem.rss - before.mem.rss) / top.level)}, heap ${kib((after.mem.heapUsed - before.mem.heapUsed) / top.level)};` +
      ` the store still keeps each cancelled record until its ttl)`,
  );
  // Where RSS beyond the live heap sits: pages the V8 heap keeps committed, or memory outside it.
  out(
    `  heap committed ${mib(after.mem.heapTotal)} vs ${mib(before.mem.heapTotal)}, external ${mib(after.mem.external)} vs ${mib(before.mem.external)}` +
      ` (array buffers ${mib(after.mem.arrayBuffers)} vs ${mib(before.mem.arrayBuffers)})`,
  );
  const floorKept = rssKept(floor.before, floor.after);
  out(
    `floor (bare node, ${floor.streams} streams, an undici Client each): RSS before ${mib(floor.before.rss)}, held ${mib(floor.held.rss)},` +
      ` after ${mib(floor.after.rss)} (kept ${signedMib(floorKept)}${youngGrowth(floor.before, floor.after)}, ${signedPercent(floorKept / floor.before.rss)} of before,` +
      ` ${keptShare(floor.before, floor.held, floor.after)} of its growth while held);` +
      ` heap before ${mib(floor.before.heapUsed)}, held ${mib(floor.held.heapUsed)}, after ${mib(floor.after.heapUsed)}`,
  );
  if (!before.mem.afterGc) out("note: taskgate ran without --expose-gc, so memory was read without a forced GC");
  if (process.env.BENCH_HEAP_SNAPSHOT_DIR) out("note: heap snapshots were written: RSS read after one counts the memory the snapshot took");
  if (rows.length > 1) {
    const rateShare = top.createRate / first.createRate;
    out(
      goalLine(`create rate at ${top.level} / at ${first.level}`, rateShare * 100, `${Math.round(rateShare * 100)} %`, {
        kind: "atLeast",
        limit: 90,
        unit: " %",
      }),
    );
  }
  out(
    goalLine(`time to cancel ${top.level} held tasks`, end.cancelMs / 1000, `${(end.cancelMs / 1000).toFixed(1)} s`, {
      kind: "atMost",
      limit: 15,
      unit: " s",
    }),
  );
  // Heap: the store keeps each cancelled task's record until its ttl (tasks/get must still answer
  // it), so the heap does not return to where it was; what must go is each held call's own state
  // (~15 KiB). The goal reads the heap kept per cancelled task against a record's size.
  const heapKept = after.mem.heapUsed - before.mem.heapUsed;
  const heapKeptPerTask = heapKept / top.level / 1024;
  // RSS: taskgate holds one upstream stream per task, so it may keep what a bare Node process
  // keeps after the same streams (the floor), 10 % more for noise between two processes, the
  // records the heap keeps (bounded by the goal above), plus 10 % of its RSS before for its own state.
  const kept = rssKept(before.mem, after.mem);
  const allowed = 1.1 * Math.max(floorKept, 0) + Math.max(heapKept, 0) + 0.1 * before.mem.rss;
  // Taskgate grows more per held task than the floor (its heap), so its share of the growth kept is
  // shown too: the same share as the floor's means the same allocator behaviour at a larger peak.
  out(
    `  taskgate kept ${signedMib(kept)} of RSS${youngGrowth(before.mem, after.mem)}, ${keptShare(before.mem, top.snapshot.mem, after.mem)} of its growth while holding ${top.level}`,
  );
  out(
    `  RSS allowed to stay: 1.1 × the floor's ${signedMib(floorKept)} + the heap kept ${signedMib(heapKept)}` +
      ` + 10 % of taskgate's ${mib(before.mem.rss)} before = ${mib(allowed)}`,
  );
  const heapChange = heapKept / before.mem.heapUsed;
  out(
    goalLine(`RSS kept after cancelling ${top.level} (vs floor)`, kept / 1_048_576, signedMib(kept), {
      kind: "atMost",
      limit: Math.round((allowed / 1_048_576) * 10) / 10,
      unit: " MiB",
    }),
  );
  out(`  heap after cancelling ${top.level} vs before: ${signedPercent(heapChange)}, the cancelled records kept until their ttl`);
  out(
    goalLine(`heap kept per cancelled task (its record)`, heapKeptPerTask, `${heapKeptPerTask.toFixed(1)} KiB`, {
      kind: "atMost",
      limit: HEAP_KEPT_PER_CANCELLED_KIB,
      unit: " KiB",
    }),
  );
  const heapPerTask = (top.snapshot.mem.heapUsed - before.mem.heapUsed) / top.level / 1024;
  out(
    goalLine(`heap per held task at ${top.level}`, heapPerTask, `${heapPerTask.toFixed(1)} KiB`, {
      kind: "atMost",
      limit: 25,
      unit: " KiB",
    }),
  );
  const extra = after.connections.total - before.connections.total;
  out(goalLine("upstream connections after cancel - before", extra, `${extra}`, { kind: "atMost", limit: 0, unit: "" }));
}

/** RSS kept from `before` to `after`, less what V8's young generation grew by meanwhile: it grows in a burst and is
 *  given back only once V8 judges the process idle, which decides nothing about what the cancelled streams left. */
const rssKept = (before: MemUsage, after: MemUsage) => after.rss - before.rss - (after.youngGeneration - before.youngGeneration);
/** The young generation's growth left out of a kept RSS, when there was any. */
const youngGrowth = (before: MemUsage, after: MemUsage) => {
  const grown = after.youngGeneration - before.youngGeneration;
  return grown === 0 ? "" : ` (not counting V8's young generation, which changed by ${signedMib(grown)})`;
};
/** How much of the RSS a process grew to while holding it still has after releasing. */
const keptShare = (before: MemUsage, held: MemUsage, after: MemUsage) =>
  `${(((after.rss - before.rss) / (held.rss - before.rss)) * 100).toFixed(0)} %`;
const signedMib = (bytes: number) => `${bytes >= 0 ? "+" : ""}${mib(bytes)}`;
const signedPercent = (fraction: number) => `${fraction >= 0 ? "+" : ""}${(fraction * 100).toFixed(1)} %`;
