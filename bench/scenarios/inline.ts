// Scenario "inline": what taskgate adds to a quick tools/call, against floors measured in the same
// run. Every case is driven by the same lean client (bench/lib/leanClient.ts: raw undici keep-alive
// POSTs, no SDK client) and the cases are interleaved per round (each round in an order of its own,
// shuffled with the round as seed), each as a block of sequential calls and a block with
// BENCH_CONCURRENCY in flight (calls/s and CPU per call), and each round ends with one call of every
// case in turn, BENCH_INLINE_CALLS times, each turn shuffled: the p50s and the goals read those
// (decisions/0040), the blocks' own p50 is printed beside them as "back to back". The upstream is the
// example legacy server's instant `greet` (SDK 1.x, SSE answers), in its own process.
//   direct      legacy POSTs straight to the upstream on one session: the bottom line
//   direct-progress  the same with a progressToken in each call's _meta, as taskgate sends a call upstream when
//               someone reads its progress (not for the inline case here): what being asked for progress costs the upstream
//   proxy       the same legacy POSTs through a plain node:http keep-alive reverse proxy
//               (bench/floors/proxy.ts): the floor the goals are read against
//   proxy-twin  the same proxy in a second process: the run's own noise (identical code, so any
//               ratio between the two is the machine's and the processes' luck, not a difference;
//               the twin carries twin-list as the floor's process carries proxy-list)
//   translate   2026-07-28 POSTs to the cheapest honest hand-written 2026→legacy gateway (floors/translate.ts:
//               callbacks, no promise per call, answered the moment the response event is read): what
//               translating itself costs; inline is also read against it (what taskgate's own layers add)
//   inline      2026-07-28 tools/call through taskgate (no tasks extension declared ⇒ inline)
//   legacy      legacy POSTs through taskgate's legacy door, on a session opened through it
//   discover    server/discover through taskgate (no upstream round trip)
//   traced      inline through a second taskgate with tracing on, every request sampled, spans
//               exported over OTLP/HTTP to a sink in the bench process
//   stdio-floor 2026-07-28 POSTs to a minimal HTTP→stdio bridge (floors/stdioBridge.ts) in front of
//               an SDK 1.x stdio server with the same greet (floors/stdioGreet.ts)
//   stdio       2026-07-28 tools/call through a taskgate running that stdio server (upstream.command)
//   stdio-floor-twin, stdio-twin  the same two again, each in a process of its own with a server process of its
//               own: identical stdio servers answer up to ~15 % apart, for minutes at a time, so the stdio
//               goal is read from both pairs' calls pooled, and each twin's ratio to its first is printed as the
//               noise of that goal (decisions/0041)
//   proxy-list  a legacy tools/list through the proxy floor, on its session
//   twin-list   the same through the twin (its process's work as the floor's)
//   list        a 2026-07-28 tools/list through taskgate (ratios read against proxy-list)
// CPU per call comes from process.cpuUsage() of the process in the middle (the proxy, the floor,
// taskgate), read before and after every block; the upstream's too (stdio servers: /proc).
// Every case is first warmed up to V8's steady state by one rule (warmUp(); decisions/0037): the
// figures are what long-running processes cost, not how far each is through its JIT warm-up.

import { join } from "node:path";
import { nodeArgsFor } from "../lib/build.js";
import { type Child, cpuMs, spawnRole } from "../lib/children.js";
import { floorNodeFlags, gatewayLogLevel, gatewayNodeFlags, phasesOn, positiveInt } from "../lib/knobs.js";
import { legacyGreet, legacyList, modernDiscover, modernGreet, modernList, openLegacySession } from "../lib/leanClient.js";
import { type Block, runBlock, shuffle } from "../lib/load.js";
import { startOtlpSink } from "../lib/otlpSink.js";
import type { PhaseSamples } from "../lib/phases.js";
import { cpuMsOf } from "../lib/processMemory.js";
import { phaseFlags, startStack } from "../lib/stack.js";
import { fixed, goalLine, median, ratio, summarise, table } from "../lib/stats.js";
import { setPhase } from "../lib/watchdog.js";
import { out, type Scenario } from "./scenario.js";

const CASES = [
  "direct",
  "direct-progress",
  "proxy",
  "proxy-twin",
  "translate",
  "inline",
  "legacy",
  "discover",
  "traced",
  "stdio-floor",
  "stdio",
  "stdio-floor-twin",
  "stdio-twin",
  "proxy-list",
  "twin-list",
  "list",
] as const;
type CaseName = (typeof CASES)[number];
/** sequential: a case's calls one after another (its block); concurrent: its block with calls in flight; inTurn: one call
 *  of every case in turn, one at a time (the p50 the goals read: decisions/0040). */
type Mode = "sequential" | "concurrent" | "inTurn";

const LABEL: Record<CaseName, string> = {
  direct: "direct to the upstream",
  "direct-progress": "direct, asked for progress",
  proxy: "node:http proxy (floor)",
  "proxy-twin": "the same proxy, 2nd process",
  translate: "minimal 2026→legacy floor",
  inline: "taskgate inline tools/call",
  legacy: "taskgate legacy door",
  discover: "taskgate server/discover",
  traced: "taskgate inline, tracing on",
  "stdio-floor": "HTTP→stdio bridge floor",
  stdio: "taskgate stdio upstream",
  "stdio-floor-twin": "the bridge floor, 2nd pair",
  "stdio-twin": "taskgate stdio, 2nd pair",
  "proxy-list": "tools/list: node:http proxy",
  "twin-list": "tools/list: the 2nd proxy",
  list: "tools/list: taskgate",
};

/** The cases each case's ratios are read against: a tools/list against the proxy's tools/list (direct: none). */
const FLOOR_OF: Partial<Record<CaseName, { direct?: CaseName; proxy: CaseName }>> = {
  "proxy-list": { proxy: "proxy-list" },
  "twin-list": { proxy: "proxy-list" },
  list: { proxy: "proxy-list" },
};
const floorsOf = (name: CaseName) => FLOOR_OF[name] ?? { direct: "direct" as CaseName, proxy: "proxy" as CaseName };

const STDIO_GREET = [process.execPath, ...nodeArgsFor(join("floors", "stdioGreet.ts"))];

/** The stdio goal's two sides, each a case and its twin, their calls pooled (decisions/0041). */
const STDIO_TASKGATE: readonly CaseName[] = ["stdio", "stdio-twin"];
const STDIO_FLOOR: readonly CaseName[] = ["stdio-floor", "stdio-floor-twin"];

/** A ratio's side: one case, or several whose calls are pooled. */
type Side = CaseName | readonly CaseName[];
const casesOf = (side: Side): readonly CaseName[] => (typeof side === "string" ? [side] : side);

interface Tally {
  latencies: number[];
  /** calls/s of each block. */
  rates: number[];
  calls: number;
  middleCpuMs: number;
  upstreamCpuMs: number;
  /** Per block, in round order: its p50, and the middle process's CPU ms and calls (for the per-round ratios). */
  blocks: { p50: number; middleCpuMs: number; calls: number }[];
}

/** How a case's CPU is read: the process in the middle (none for direct) and the upstream's. */
interface CpuProbe {
  middle?: () => Promise<number>;
  upstream: () => Promise<number>;
}

/** A running process has used some CPU: 0 means /proc could not be read (not Linux, or another pid namespace). */
const readable = (ms: number) => (ms > 0 ? ms : Number.NaN);

/** The CPU ms a case's probe reads now: the process in the middle's (0 for direct) and the upstream's (NaN: unreadable). */
const cpuNow = async (probe: CpuProbe) => {
  const [middle, upstream] = await Promise.all([probe.middle?.() ?? 0, probe.upstream()]);
  return { middle, upstream };
};

const childCpu = (child: Child) => async () => {
  const usage = await child.cpu();
  return cpuMs({ user: 0, system: 0 }, usage);
};

export function inlineScenario(): Scenario {
  const rounds = positiveInt("BENCH_ROUNDS", 8);
  const seqCalls = positiveInt("BENCH_INLINE_CALLS", 100);
  const concurrency = positiveInt("BENCH_CONCURRENCY", 16);
  const concCalls = seqCalls * 4;
  const warmup = positiveInt("BENCH_WARMUP", 4_000);
  const warmupMost = Math.max(warmup, positiveInt("BENCH_WARMUP_MAX", 16_000));
  return {
    name: "inline",
    title: "a quick tools/call through taskgate (modern, legacy door, stdio) vs direct and vs floors, one lean client",
    sizes: () =>
      `${rounds} rounds × (${seqCalls} sequential + ${concCalls} at ${concurrency} in flight) per case, then ${seqCalls} turns ` +
      `of one call of each case, ${CASES.length} cases, ` +
      `warm-up ${warmup}–${warmupMost} calls per case until its CPU per call stops falling`,
    budgetMs: () => 120_000 + CASES.length * warmupMost * 2 + rounds * CASES.length * (2 * seqCalls + concCalls) * 10,
    async run() {
      setPhase("starting upstream, taskgates and floors");
      const sink = await startOtlpSink();
      const stack = await startStack({ tracedTo: sink.endpoint });
      const traced = stack.traced!;
      const upstream = { upstream: stack.upstreamUrl };
      const floorFlags = [...floorNodeFlags(), ...phaseFlags()];
      const bridgeOf = (name: string) =>
        spawnRole(name, "../floors/stdioBridge.ts", { args: { command: STDIO_GREET }, nodeFlags: floorFlags });
      const stdioTaskgate = (name: string) =>
        spawnRole(name, "gateway.ts", {
          nodeFlags: [...gatewayNodeFlags(), ...phaseFlags()],
          args: {
            config: { upstream: { command: STDIO_GREET, initializeTimeoutMs: 60_000 }, host: "127.0.0.1", port: 0, auth: { mode: "demo" } },
            logLevel: gatewayLogLevel(),
          },
        });
      const [proxy, twin, translate, bridge, stdioGateway, bridgeTwin, stdioTwin] = await Promise.all([
        spawnRole("proxy-floor", "../floors/proxy.ts", { args: upstream, nodeFlags: floorFlags }),
        spawnRole("proxy-twin", "../floors/proxy.ts", { args: upstream, nodeFlags: floorFlags }),
        spawnRole("translate-floor", "../floors/translate.ts", { args: upstream, nodeFlags: floorFlags }),
        bridgeOf("stdio-floor"),
        stdioTaskgate("taskgate-stdio"),
        bridgeOf("stdio-floor-twin"),
        stdioTaskgate("taskgate-stdio-twin"),
      ]);
      const url = (child: Child) => child.info.url as string;
      const calls: Record<CaseName, () => Promise<void>> = {
        direct: legacyGreet(stack.upstreamUrl, await openLegacySession(stack.upstreamUrl)),
        "direct-progress": legacyGreet(stack.upstreamUrl, await openLegacySession(stack.upstreamUrl), true),
        proxy: legacyGreet(url(proxy), await openLegacySession(url(proxy))),
        "proxy-twin": legacyGreet(url(twin), await openLegacySession(url(twin))),
        translate: modernGreet(url(translate)),
        inline: modernGreet(stack.url),
        legacy: legacyGreet(stack.url, await openLegacySession(stack.url)),
        discover: modernDiscover(stack.url),
        traced: modernGreet(traced.url),
        "stdio-floor": modernGreet(url(bridge)),
        stdio: modernGreet(url(stdioGateway)),
        "stdio-floor-twin": modernGreet(url(bridgeTwin)),
        "stdio-twin": modernGreet(url(stdioTwin)),
        "proxy-list": legacyList(url(proxy), await openLegacySession(url(proxy))),
        "twin-list": legacyList(url(twin), await openLegacySession(url(twin))),
        list: modernList(stack.url),
      };
      // The identity's stdio server process starts with its first call (the one before it serves taskgate's own catalog).
      const serverPidOf = async (gateway: Child, call: () => Promise<void>) => {
        const catalogPids = new Set(await gateway.ask<number[]>("upstreamProcesses"));
        await call();
        return (await gateway.ask<number[]>("upstreamProcesses")).find((pid) => !catalogPids.has(pid));
      };
      const stdioPid = await serverPidOf(stdioGateway, calls.stdio);
      const stdioTwinPid = await serverPidOf(stdioTwin, calls["stdio-twin"]);
      const serverCpu = (pid: number | undefined) => async () => (pid ? readable(cpuMsOf(pid)) : Number.NaN);
      const upstreamCpu = childCpu(stack.upstream);
      const probes: Record<CaseName, CpuProbe> = {
        direct: { upstream: upstreamCpu },
        "direct-progress": { upstream: upstreamCpu },
        proxy: { middle: childCpu(proxy), upstream: upstreamCpu },
        "proxy-twin": { middle: childCpu(twin), upstream: upstreamCpu },
        translate: { middle: childCpu(translate), upstream: upstreamCpu },
        inline: { middle: childCpu(stack.gateway), upstream: upstreamCpu },
        legacy: { middle: childCpu(stack.gateway), upstream: upstreamCpu },
        discover: { middle: childCpu(stack.gateway), upstream: upstreamCpu },
        traced: { middle: childCpu(traced.gateway), upstream: upstreamCpu },
        "stdio-floor": { middle: childCpu(bridge), upstream: serverCpu(bridge.info.serverPid as number) },
        stdio: { middle: childCpu(stdioGateway), upstream: serverCpu(stdioPid) },
        "stdio-floor-twin": { middle: childCpu(bridgeTwin), upstream: serverCpu(bridgeTwin.info.serverPid as number) },
        "stdio-twin": { middle: childCpu(stdioTwin), upstream: serverCpu(stdioTwinPid) },
        "proxy-list": { middle: childCpu(proxy), upstream: upstreamCpu },
        "twin-list": { middle: childCpu(twin), upstream: upstreamCpu },
        list: { middle: childCpu(stack.gateway), upstream: upstreamCpu },
      };

      // BENCH_PHASES: the process in the middle of each case times its calls' phases (sequential blocks, and in turn).
      const timed: Partial<Record<CaseName, Child>> = phasesOn()
        ? { proxy, translate, inline: stack.gateway, legacy: stack.gateway, "stdio-floor": bridge, stdio: stdioGateway }
        : {};
      const phases = new Map<CaseName, PhaseSamples>();
      // In turn too (what the goals read): each timed process once, under the first case it serves.
      const timedOnce = new Map<Child, CaseName>();
      for (const [name, child] of Object.entries(timed)) if (!timedOnce.has(child)) timedOnce.set(child, name as CaseName);
      const phasesInTurn = new Map<CaseName, PhaseSamples>();

      const warmed = new Map<CaseName, WarmUp>();
      for (const name of CASES) {
        setPhase(`warming up ${name}`);
        warmed.set(name, await warmUp(calls[name], probes[name], { least: warmup, most: warmupMost, concurrency }));
      }
      reportWarmUp(warmed);

      const tallies = new Map<string, Tally>();
      const tally = (name: CaseName, mode: Mode) => {
        const key = `${name}/${mode}`;
        if (!tallies.has(key)) tallies.set(key, { latencies: [], rates: [], calls: 0, middleCpuMs: 0, upstreamCpuMs: 0, blocks: [] });
        return tallies.get(key)!;
      };
      const measure = async (into: Tally, probe: CpuProbe, block: () => Promise<Block>) => {
        const before = await cpuNow(probe);
        const { latencies, elapsedMs } = await block();
        const after = await cpuNow(probe);
        const middleCpuMs = after.middle - before.middle;
        into.latencies.push(...latencies);
        into.rates.push((latencies.length / elapsedMs) * 1000);
        into.calls += latencies.length;
        into.middleCpuMs += middleCpuMs;
        into.upstreamCpuMs += after.upstream - before.upstream;
        into.blocks.push({ p50: summarise(latencies).p50, middleCpuMs, calls: latencies.length });
      };
      const acceptedBefore = await stack.upstream.ask<number>("accepted");
      let legacyCalls = 0;
      let legacyAccepted = 0;
      for (let round = 0; round < rounds; round++) {
        for (const name of shuffle(CASES, round)) {
          setPhase(`round ${round + 1}/${rounds}, ${name}`);
          const a0 = name === "legacy" ? await stack.upstream.ask<number>("accepted") : 0;
          await timed[name]?.ask("phases");
          await measure(tally(name, "sequential"), probes[name], () => runBlock(seqCalls, 1, calls[name]));
          const taken = await timed[name]?.ask<PhaseSamples>("phases");
          if (taken) phases.set(name, mergedPhases(phases.get(name), taken));
          await measure(tally(name, "concurrent"), probes[name], () => runBlock(concCalls, concurrency, calls[name]));
          if (name === "legacy") {
            legacyAccepted += (await stack.upstream.ask<number>("accepted")) - a0;
            legacyCalls += seqCalls + concCalls;
          }
        }
        setPhase(`round ${round + 1}/${rounds}, one call of each case in turn`);
        for (const [child] of timedOnce) await child.ask("phases");
        await inTurn(seqCalls, round, calls, (name) => tally(name, "inTurn"));
        for (const [child, name] of timedOnce) {
          phasesInTurn.set(name, mergedPhases(phasesInTurn.get(name), await child.ask<PhaseSamples>("phases")));
        }
      }
      const acceptedAll = (await stack.upstream.ask<number>("accepted")) - acceptedBefore;
      report(tally, concurrency);
      reportRounds(tally);
      if (phases.size > 0) reportPhases(phases, "back to back");
      if (phasesInTurn.size > 0) reportPhases(phasesInTurn, "in turn (a process serving several cases: all of them)");
      out(
        `upstream connections accepted: ${legacyAccepted} during the legacy-door blocks (${legacyCalls} calls), ` +
          `${acceptedAll} during all rounds (the blocks and the calls in turn)`,
      );
      goals(tally, { accepted: legacyAccepted, calls: legacyCalls, allowed: (concurrency + 1) * rounds });
      out(`the OTLP sink received ${sink.exports} exports, ${(sink.bytes / 1024).toFixed(0)} KiB of spans from the traced taskgate`);
    },
  };
}

/** One call of every case, one at a time, in an order of its own (shuffled, seeded by the round and the turn), `turns` times:
 *  the cases meet the machine's drift within milliseconds of each other, not a block's length apart (decisions/0040). Each
 *  case's tally gets its latencies and, as the round's block, their p50. */
async function inTurn(
  turns: number,
  round: number,
  calls: Record<CaseName, () => Promise<void>>,
  tallyOf: (name: CaseName) => Tally,
): Promise<void> {
  const latencies = new Map<CaseName, number[]>(CASES.map((name) => [name, []]));
  for (let turn = 0; turn < turns; turn++) {
    for (const name of shuffle(CASES, (round + 1) * 100_003 + turn)) {
      const started = performance.now();
      await calls[name]();
      latencies.get(name)!.push(performance.now() - started);
    }
  }
  for (const [name, taken] of latencies) {
    const into = tallyOf(name);
    into.latencies.push(...taken);
    into.calls += taken.length;
    into.blocks.push({ p50: summarise(taken).p50, middleCpuMs: Number.NaN, calls: taken.length });
  }
}

/** Calls per warm-up block: half one at a time, half at the concurrency (as the measured blocks). */
const WARMUP_BLOCK = 1_000;
/** How much the CPU per call may still fall between warm-up blocks for the case to count as steady. */
const STEADY_WITHIN = 0.05;

interface WarmUp {
  /** CPU ms per call (process in the middle + upstream) of each warm-up block. */
  blocks: number[];
  steady: boolean;
}

/** Warms a case up to V8's steady state (the figures are what a long-running process costs, not its JIT warm-up): blocks of
 *  WARMUP_BLOCK calls, at least `least` calls, until the CPU per call of the processes involved (the one in the middle and
 *  the upstream) stops falling, at most `most` calls. Every case, floors included, is warmed by the same rule. */
async function warmUp(
  call: () => Promise<void>,
  probe: CpuProbe,
  limits: { least: number; most: number; concurrency: number },
): Promise<WarmUp> {
  const cpu = async () => {
    const { middle, upstream } = await cpuNow(probe);
    return middle + (Number.isNaN(upstream) ? 0 : upstream);
  };
  const blocks: number[] = [];
  for (let calls = 0; calls < limits.most; calls += WARMUP_BLOCK) {
    const before = await cpu();
    await runBlock(WARMUP_BLOCK / 2, 1, call);
    await runBlock(WARMUP_BLOCK / 2, limits.concurrency, call);
    blocks.push(((await cpu()) - before) / WARMUP_BLOCK);
    if (calls + WARMUP_BLOCK >= limits.least && isSteady(blocks)) return { blocks, steady: true };
  }
  return { blocks, steady: false };
}

/** Steady: no new low — neither of the last two blocks fell more than STEADY_WITHIN below the lowest block before them (a
 *  block slowed by the machine's noise cannot end the warm-up: only two blocks in a row that set no new low do). */
const isSteady = (blocks: number[]) =>
  blocks.length >= 4 && Math.min(...blocks.slice(-2)) >= (1 - STEADY_WITHIN) * Math.min(...blocks.slice(0, -2));

function reportWarmUp(warmed: Map<CaseName, WarmUp>): void {
  out(`warm-up: CPU ms per call (process in the middle + upstream) of each block of ${WARMUP_BLOCK} calls, until steady:`);
  for (const [name, { blocks, steady }] of warmed) {
    const curve = blocks.map((ms) => fixed(ms)).join(" ");
    out(`  ${LABEL[name].padEnd(28)} ${curve}${steady ? "" : `  (still falling after ${blocks.length * WARMUP_BLOCK} calls)`}`);
  }
  out();
}

function mergedPhases(into: PhaseSamples | undefined, more: PhaseSamples): PhaseSamples {
  if (!into) return more;
  return {
    toUpstream: into.toUpstream.concat(more.toUpstream),
    fromUpstream: into.fromUpstream.concat(more.fromUpstream),
    inside: into.inside.concat(more.inside),
  };
}

/** BENCH_PHASES: medians per case of where a sequential call's time went in the process in the middle (back to back, or in
 *  turn, where a process serving several cases times all of their calls under its first case's label). */
function reportPhases(phases: Map<CaseName, PhaseSamples>, mode: string): void {
  const µs = (samples: number[]) => (summarise(samples).p50 * 1000).toFixed(0);
  const rows = [...phases].map(([name, p]) => [LABEL[name], String(p.inside.length), µs(p.toUpstream), µs(p.fromUpstream), µs(p.inside)]);
  out();
  out(
    `phases in the process in the middle, sequential calls ${mode}, p50 µs (lib/phases.ts; the first upstream byte may be its headers only):`,
  );
  out(table(["case", "calls timed", "arrival → upstream write", "first upstream byte → response write", "arrival → response write"], rows));
}

/** CPU ms per call of the middle process (or the upstream) over both modes: of one case, or of several pooled. */
function cpuPerCall(tally: (name: CaseName, mode: Mode) => Tally, side: Side, of: "middleCpuMs" | "upstreamCpuMs"): number {
  const tallies = casesOf(side).flatMap((name) => [tally(name, "sequential"), tally(name, "concurrent")]);
  return tallies.reduce((ms, t) => ms + t[of], 0) / tallies.reduce((calls, t) => calls + t.calls, 0);
}

/** A difference in µs, with its sign: "+12 µs", "-3 µs". */
const signedUs = (us: number) => `${us >= 0 ? "+" : ""}${us.toFixed(0)} µs`;

/** The p50 of a case's calls one at a time: in turn with the other cases (what the goals read), or back to back in its block;
 *  of several cases, the p50 of their calls pooled. */
const p50Of = (tally: (name: CaseName, mode: Mode) => Tally, mode: "inTurn" | "sequential") => (side: Side) =>
  summarise(casesOf(side).flatMap((name) => tally(name, mode).latencies)).p50;

function report(tally: (name: CaseName, mode: Mode) => Tally, concurrency: number): void {
  const p50 = p50Of(tally, "inTurn");
  const backToBack = p50Of(tally, "sequential");
  const rate = (name: CaseName) => median(tally(name, "concurrent").rates);
  const rows = CASES.map((name) => {
    const s = summarise(tally(name, "inTurn").latencies);
    const middle = cpuPerCall(tally, name, "middleCpuMs");
    const { direct, proxy } = floorsOf(name);
    return [
      LABEL[name],
      fixed(s.p50),
      fixed(s.p99),
      direct ? ratio(s.p50 / p50(direct)) : "-",
      ratio(s.p50 / p50(proxy)),
      fixed(backToBack(name)),
      ratio(backToBack(name) / backToBack(proxy)),
      rate(name).toFixed(0),
      direct ? ratio(rate(direct) / rate(name)) : "-",
      ratio(rate(proxy) / rate(name)),
      name.startsWith("direct") ? "-" : fixed(middle),
      name.startsWith("direct") ? "-" : ratio(middle / cpuPerCall(tally, proxy, "middleCpuMs")),
      fixed(cpuPerCall(tally, name, "upstreamCpuMs")),
    ];
  });
  out(
    `latency: one call at a time, one call of every case in turn (p50, p99), and back to back in each case's block (b2b); ` +
      `calls/s: ${concurrency} in flight; CPU: both blocks, ms per call`,
  );
  out(
    table(
      [
        "case",
        "p50 ms",
        "p99 ms",
        "p50/direct",
        "p50/proxy",
        "b2b p50 ms",
        "b2b/proxy",
        "calls/s",
        "slower than direct",
        "than proxy",
        "CPU ms",
        "CPU/proxy's",
        "upstream CPU ms",
      ],
      rows,
    ),
  );
  out();
  out(
    `stdio (both pairs pooled): taskgate p50 ${ratio(p50(STDIO_TASKGATE) / p50(STDIO_FLOOR))} the bridge floor's, ` +
      `CPU ${ratio(cpuPerCall(tally, STDIO_TASKGATE, "middleCpuMs") / cpuPerCall(tally, STDIO_FLOOR, "middleCpuMs"))}; ` +
      `tracing on: p50 ${ratio(p50("traced") / p50("inline"))} and CPU ` +
      `${ratio(cpuPerCall(tally, "traced", "middleCpuMs") / cpuPerCall(tally, "inline", "middleCpuMs"))} of tracing off`,
  );
  // taskgate asks the upstream for progress when someone reads it (the client's token, a task): the cost of a call that
  // may become a task, which the inline case (no token, no extension) does not pay. Shown beside the goals.
  const askedUs = (p50("direct-progress") - p50("direct")) * 1000;
  const addedUs = (p50("inline") - p50("proxy")) * 1000;
  const askedCpuUs = (cpuPerCall(tally, "direct-progress", "upstreamCpuMs") - cpuPerCall(tally, "direct", "upstreamCpuMs")) * 1000;
  out(
    `the upstream asked for progress (a progressToken, as taskgate asks when the client or a task reads it): p50 ${signedUs(askedUs)}, ` +
      `its CPU ${signedUs(askedCpuUs)} per call; ` +
      `taskgate inline's p50 is ${addedUs.toFixed(0)} µs above the proxy floor's`,
  );
  // What translating itself costs (the cheapest honest 2026→legacy gateway), and what taskgate's own layers add to it.
  const overTranslateUs = (p50("inline") - p50("translate")) * 1000;
  out(
    `the translating floor's p50 is ${ratio(p50("translate") / p50("proxy"))} the proxy floor's; taskgate inline's is ` +
      `${ratio(p50("inline") / p50("translate"))} the translating floor's (${signedUs(overTranslateUs)}: taskgate's own layers)`,
  );
  out(
    `tools/list rows: read against the proxy's tools/list; taskgate p50 ${ratio(p50("list") / p50("proxy-list"))}, ` +
      `CPU ${ratio(cpuPerCall(tally, "list", "middleCpuMs") / cpuPerCall(tally, "proxy-list", "middleCpuMs"))}`,
  );
}

/** The goals' ratios round by round (each round's blocks of a case and its floor ran minutes apart at most): how far a
 *  run's pooled figure moves with the machine's drift. Shown beside the goals, not read as them. */
function reportRounds(tally: (name: CaseName, mode: Mode) => Tally): void {
  // Each side a case, or cases pooled (the stdio goal's).
  const pairs: [string, Side, Side][] = [
    ["proxy-twin / proxy", "proxy-twin", "proxy"],
    ["inline / proxy", "inline", "proxy"],
    ["translate / proxy", "translate", "proxy"],
    ["inline / translate", "inline", "translate"],
    ["legacy / proxy", "legacy", "proxy"],
    ["stdio / stdio-floor", STDIO_TASKGATE, STDIO_FLOOR],
    ["stdio-twin / stdio", "stdio-twin", "stdio"],
    ["bridge twin / bridge", "stdio-floor-twin", "stdio-floor"],
    ["list / proxy-list", "list", "proxy-list"],
  ];
  const rounds = tally("proxy", "sequential").blocks.length;
  /** A round's calls of a case in one mode: its tally's latencies, cut where each round's block ends. */
  const roundCalls = (name: CaseName, mode: "inTurn" | "sequential", round: number) => {
    const { blocks, latencies } = tally(name, mode);
    const from = blocks.slice(0, round).reduce((n, block) => n + block.calls, 0);
    return latencies.slice(from, from + blocks[round]!.calls);
  };
  const p50 = (mode: "inTurn" | "sequential", side: Side, round: number) =>
    summarise(casesOf(side).flatMap((name) => roundCalls(name, mode, round))).p50;
  const cpu = (side: Side, round: number) => {
    const blocks = casesOf(side).flatMap((name) => [tally(name, "sequential").blocks[round]!, tally(name, "concurrent").blocks[round]!]);
    return blocks.reduce((ms, block) => ms + block.middleCpuMs, 0) / blocks.reduce((calls, block) => calls + block.calls, 0);
  };
  const each = (of: (round: number) => number) => Array.from({ length: rounds }, (_, round) => of(round));
  const line = (values: number[]) => `${values.map((v) => v.toFixed(2)).join(" ")} (median ${median(values).toFixed(2)})`;
  out("the same ratios round by round, and their median: p50 in turn | p50 back to back | CPU per call");
  for (const [label, side, floor] of pairs) {
    const inTurn = each((r) => p50("inTurn", side, r) / p50("inTurn", floor, r));
    const backToBack = each((r) => p50("sequential", side, r) / p50("sequential", floor, r));
    const cpus = each((r) => cpu(side, r) / cpu(floor, r));
    out(`  ${label.padEnd(22)} ${line(inTurn)} | ${line(backToBack)} | ${line(cpus)}`);
  }
}

/** `legacy`: upstream connections accepted during the legacy-door blocks, their calls, and the most that means "kept alive"
 *  (one per call in flight per round: idle ones close after 4 s, while the other cases run). */
function goals(tally: (name: CaseName, mode: Mode) => Tally, legacy: { accepted: number; calls: number; allowed: number }): void {
  const p50 = p50Of(tally, "inTurn");
  const vsProxy = (name: CaseName) => p50(name) / p50("proxy");
  const inlineCpu = cpuPerCall(tally, "inline", "middleCpuMs");
  const stdio = p50(STDIO_TASKGATE) / p50(STDIO_FLOOR);
  out(goalLine("inline p50 / proxy floor p50", vsProxy("inline"), ratio(vsProxy("inline")), { kind: "atMost", limit: 1.1 }));
  // The issue's CPU goal, 0.35 ms, was 1.35× the proxy floor's 0.26 ms on the machine it was set on; read against the floor
  // (its own CPU moves with this machine's load), and as the absolute figure beside it (decisions/0035).
  const cpuVsProxy = inlineCpu / cpuPerCall(tally, "proxy", "middleCpuMs");
  out(goalLine("taskgate CPU per inline call / proxy floor's", cpuVsProxy, ratio(cpuVsProxy), { kind: "atMost", limit: 1.35 }));
  out(goalLine("taskgate CPU per inline call", inlineCpu, `${fixed(inlineCpu)} ms`, { kind: "atMost", limit: 0.35, unit: " ms" }));
  out(goalLine("legacy door p50 / proxy floor p50", vsProxy("legacy"), ratio(vsProxy("legacy")), { kind: "atMost", limit: 1.1 }));
  const perCall = legacy.accepted / Math.max(1, legacy.calls);
  const limit = Number((legacy.allowed / Math.max(1, legacy.calls)).toFixed(3));
  out(goalLine("legacy door: upstream connections per call", perCall, perCall.toFixed(3), { kind: "atMost", limit, unit: "" }));
  out(goalLine("stdio p50 / bridge floor p50, both pairs", stdio, ratio(stdio), { kind: "atMost", limit: 1.2 }));
  const twinCpu = cpuPerCall(tally, "proxy-twin", "middleCpuMs") / cpuPerCall(tally, "proxy", "middleCpuMs");
  out(
    `this run's own noise: the same proxy in a second process read p50 ${ratio(vsProxy("proxy-twin"))} and CPU ${ratio(twinCpu)} ` +
      "the first's; a ratio nearer its goal than that is not decided by one run",
  );
  out(
    `the stdio pairs' own noise: taskgate's second stdio process (a server process of its own) read p50 ` +
      `${ratio(p50("stdio-twin") / p50("stdio"))} the first's, the bridge's second ${ratio(p50("stdio-floor-twin") / p50("stdio-floor"))}; ` +
      `the first pair alone read ${ratio(p50("stdio") / p50("stdio-floor"))}, the second ${ratio(p50("stdio-twin") / p50("stdio-floor-twin"))}`,
  );
  // Beside the goals, not read as them: the same p50s with each case's calls back to back (decisions/0040).
  const b2b = p50Of(tally, "sequential");
  out(
    `back to back (each case's block of calls in a row): inline ${ratio(b2b("inline") / b2b("proxy"))}, legacy door ` +
      `${ratio(b2b("legacy") / b2b("proxy"))}, stdio ${ratio(b2b(STDIO_TASKGATE) / b2b(STDIO_FLOOR))}, the twin ` +
      `${ratio(b2b("proxy-twin") / b2b("proxy"))} the floor's p50`,
  );
}
