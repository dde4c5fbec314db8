// Scenario "inline": what taskgate adds to a quick tools/call. Three cases, interleaved per round
// (the order rotates), each as a block of sequential calls and a block with BENCH_CONCURRENCY in
// flight:
//   direct    tools/call greet straight to the example server over a warm SDK 1.x client session
//             (Client + StreamableHTTPClientTransport in the bench process): the floor
//   inline    tools/call greet through taskgate (no tasks extension declared ⇒ answered inline)
//   discover  server/discover through taskgate (answered from the cached initialize): what any
//             request through taskgate costs without an upstream round trip
//   traced    tools/call greet through a second taskgate, the same but with tracing on, every
//             request sampled (OTEL_TRACES_SAMPLER=always_on), its spans exported over OTLP/HTTP
//             (protobuf) to a sink in the bench process: what tracing costs when it is on
// Upstream and taskgate run in their own processes; their CPU per call comes from
// process.cpuUsage() of each, read before and after every block.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { cpuMs } from "../lib/children.js";
import { positiveInt } from "../lib/knobs.js";
import { type Block, rotate, runBlock } from "../lib/load.js";
import { discover, greet } from "../lib/modernClient.js";
import { startOtlpSink } from "../lib/otlpSink.js";
import { startStack } from "../lib/stack.js";
import { fixed, goalLine, median, ratio, summarise, table } from "../lib/stats.js";
import { setPhase } from "../lib/watchdog.js";
import { out, type Scenario } from "./scenario.js";

type CaseName = "direct" | "inline" | "discover" | "traced";
type Mode = "sequential" | "concurrent";

interface Tally {
  latencies: number[];
  /** calls/s of each block. */
  rates: number[];
  calls: number;
  gatewayCpuMs: number;
  upstreamCpuMs: number;
}

export function inlineScenario(): Scenario {
  const rounds = positiveInt("BENCH_ROUNDS", 8);
  const seqCalls = positiveInt("BENCH_INLINE_CALLS", 100);
  const concurrency = positiveInt("BENCH_CONCURRENCY", 16);
  const concCalls = seqCalls * 4;
  const warmup = positiveInt("BENCH_WARMUP", 100);
  return {
    name: "inline",
    title: "inline tools/call overhead: greet through taskgate vs direct on the same upstream",
    sizes: () => `${rounds} rounds × (${seqCalls} sequential + ${concCalls} at ${concurrency} in flight) per case, ${warmup} warm-up`,
    budgetMs: () => 60_000 + rounds * 4 * (seqCalls + concCalls) * 25,
    async run() {
      setPhase("starting upstream and taskgate");
      const sink = await startOtlpSink();
      const stack = await startStack({ tracedTo: sink.endpoint });
      const traced = stack.traced!;
      const client = new Client({ name: "taskgate-bench-direct", version: "1.0.0" });
      // The SDK 1.x transport gives every POST one session-wide abort signal, which piles up a
      // listener per call (MaxListenersExceededWarning in this process); the floor never aborts,
      // so its requests go without it.
      const transport = new StreamableHTTPClientTransport(new URL(stack.upstreamUrl), {
        fetch: (url, init) => fetch(url, { ...init, signal: null }),
      });
      await client.connect(transport);
      try {
        const calls: Record<CaseName, () => Promise<unknown>> = {
          direct: async () => {
            const result = await client.request(
              { method: "tools/call", params: { name: "greet", arguments: { name: "bench" } } },
              CallToolResultSchema,
            );
            const first = result.content[0];
            if (first?.type !== "text" || first.text !== "Hello, bench!")
              throw new Error(`direct greet: unexpected ${JSON.stringify(result)}`);
          },
          inline: () => greet(stack.url),
          discover: () => discover(stack.url),
          traced: () => greet(traced.url),
        };
        const gatewayOf = (name: CaseName) => (name === "traced" ? traced.gateway : stack.gateway);
        const cases = Object.keys(calls) as CaseName[];

        setPhase("warming up");
        for (const name of cases) {
          await runBlock(warmup, 1, calls[name]);
          await runBlock(warmup, concurrency, calls[name]);
        }

        const tallies = new Map<string, Tally>();
        const tally = (name: CaseName, mode: Mode) => {
          const key = `${name}/${mode}`;
          if (!tallies.has(key)) tallies.set(key, { latencies: [], rates: [], calls: 0, gatewayCpuMs: 0, upstreamCpuMs: 0 });
          return tallies.get(key)!;
        };
        const measure = async (into: Tally, gateway: typeof stack.gateway, block: () => Promise<Block>) => {
          const [g0, u0] = await Promise.all([gateway.cpu(), stack.upstream.cpu()]);
          const { latencies, elapsedMs } = await block();
          const [g1, u1] = await Promise.all([gateway.cpu(), stack.upstream.cpu()]);
          into.latencies.push(...latencies);
          into.rates.push((latencies.length / elapsedMs) * 1000);
          into.calls += latencies.length;
          into.gatewayCpuMs += cpuMs(g0, g1);
          into.upstreamCpuMs += cpuMs(u0, u1);
        };
        for (let round = 0; round < rounds; round++) {
          for (const name of rotate(cases, round)) {
            setPhase(`round ${round + 1}/${rounds}, ${name}`);
            await measure(tally(name, "sequential"), gatewayOf(name), () => runBlock(seqCalls, 1, calls[name]));
            await measure(tally(name, "concurrent"), gatewayOf(name), () => runBlock(concCalls, concurrency, calls[name]));
          }
        }
        report(tally, cases, concurrency);
        reportTracing(tally);
        out(`the OTLP sink received ${sink.exports} exports, ${(sink.bytes / 1024).toFixed(0)} KiB of spans from the traced taskgate`);
      } finally {
        await transport.terminateSession().catch(() => undefined);
        await client.close();
      }
    },
  };
}

function report(tally: (name: CaseName, mode: Mode) => Tally, cases: CaseName[], concurrency: number): void {
  const label: Record<CaseName, string> = {
    direct: "direct (floor)",
    inline: "inline via taskgate",
    discover: "discover via taskgate",
    traced: "inline, tracing on",
  };
  for (const mode of ["sequential", "concurrent"] as const) {
    const floor = tally("direct", mode);
    const floorP50 = summarise(floor.latencies).p50;
    const floorRate = median(floor.rates);
    const rows = cases.map((name) => {
      const t = tally(name, mode);
      const s = summarise(t.latencies);
      const rate = median(t.rates);
      return [
        label[name],
        fixed(s.p50),
        fixed(s.p95),
        fixed(s.mean),
        rate.toFixed(0),
        ratio(s.p50 / floorP50),
        ratio(floorRate / rate),
        name === "direct" ? "-" : fixed(t.gatewayCpuMs / t.calls),
        fixed(t.upstreamCpuMs / t.calls),
      ];
    });
    out(mode === "sequential" ? "sequential (one call at a time)" : `${concurrency} calls in flight`);
    out(
      table(
        [
          "case",
          "p50 ms",
          "p95 ms",
          "mean ms",
          "calls/s",
          "p50/direct",
          "direct calls/s ÷ this",
          "taskgate CPU ms/call",
          "upstream CPU ms/call",
        ],
        rows,
      ),
    );
    out();
  }
  const inline = tally("inline", "sequential");
  const inlineConc = tally("inline", "concurrent");
  const direct = tally("direct", "sequential");
  const directConc = tally("direct", "concurrent");
  const gatewayPerCall = (inline.gatewayCpuMs + inlineConc.gatewayCpuMs) / (inline.calls + inlineConc.calls);
  const upstreamPerCall = (direct.upstreamCpuMs + directConc.upstreamCpuMs) / (direct.calls + directConc.calls);
  out(
    `taskgate CPU per inline call ${fixed(gatewayPerCall)} ms = ${ratio(gatewayPerCall / upstreamPerCall)} ` +
      `the upstream's own CPU per direct call (${fixed(upstreamPerCall)} ms)`,
  );
  const p50Ratio = summarise(inline.latencies).p50 / summarise(direct.latencies).p50;
  out(goalLine("inline p50 / direct p50 (sequential)", p50Ratio, ratio(p50Ratio), { kind: "atMost", limit: 1.5 }));
}

/** What tracing on (every request sampled and exported) adds to an inline call, against the same call with tracing off. */
function reportTracing(tally: (name: CaseName, mode: Mode) => Tally): void {
  const perCall = (name: CaseName) => {
    const [seq, conc] = [tally(name, "sequential"), tally(name, "concurrent")];
    return (seq.gatewayCpuMs + conc.gatewayCpuMs) / (seq.calls + conc.calls);
  };
  const p50 = (name: CaseName) => summarise(tally(name, "sequential").latencies).p50;
  const direct = p50("direct");
  out(`inline p50 / direct p50 (sequential): tracing off ${ratio(p50("inline") / direct)}, tracing on ${ratio(p50("traced") / direct)}`);
  out(
    `taskgate CPU per inline call: tracing off ${fixed(perCall("inline"))} ms, tracing on ${fixed(perCall("traced"))} ms ` +
      `(${ratio(perCall("traced") / perCall("inline"))})`,
  );
}
