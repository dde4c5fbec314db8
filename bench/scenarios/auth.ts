// auth: what the bearer check costs a quick tools/call. Three taskgates in front of one example
// legacy server, each in its own process, driven by the same lean client as `inline`:
//   demo       auth.mode demo (the token is the user name): the floor, no signature checked
//   jwt        auth.mode jwt with one fixed ES256 public key (auth.jwt.publicKey): each token verified
//              once, then remembered for auth.jwt.verifiedCacheMs (the default)
//   jwt-every  the same with verifiedCacheMs 0: every request's signature and claims checked
// Each case is warmed up (BENCH_AUTH_WARMUP calls, 16 in flight), then BENCH_ROUNDS rounds, each a
// block of calls per case (one at a time, then 16 in flight: CPU per call of taskgate's process) in
// a shuffled order, then BENCH_INLINE_CALLS turns of one call of every case in turn (the p50s).
// Printed as ratios to demo; no goal (what a production deployment pays for its identity check).

import { exportSPKI, generateKeyPair, SignJWT } from "jose";
import { type Child, cpuMs, spawnRole } from "../lib/children.js";
import { gatewayLogLevel, positiveInt } from "../lib/knobs.js";
import { modernGreet } from "../lib/leanClient.js";
import { runBlock, shuffle } from "../lib/load.js";
import { fixed, median, ratio, table } from "../lib/stats.js";
import { setPhase } from "../lib/watchdog.js";
import { out, type Scenario } from "./scenario.js";

const CASES = ["demo", "jwt", "jwt-every"] as const;
type CaseName = (typeof CASES)[number];
const ISSUER = "https://issuer.bench.invalid";
const AUDIENCE = "https://taskgate.bench.invalid/mcp";

export function authScenario(): Scenario {
  const rounds = positiveInt("BENCH_ROUNDS", 8);
  const seqCalls = positiveInt("BENCH_INLINE_CALLS", 100);
  const concCalls = seqCalls * 4;
  const warmup = positiveInt("BENCH_AUTH_WARMUP", 6_000);
  return {
    name: "auth",
    title: "the bearer check on a quick tools/call: taskgate demo vs jwt (tokens remembered) vs jwt (every request verified)",
    sizes: () =>
      `${CASES.length} cases, ${warmup} warm-up calls each, ${rounds} rounds × (${seqCalls} + ${concCalls} at 16 in flight + ${seqCalls} in turn)`,
    budgetMs: () => 120_000 + CASES.length * (warmup + rounds * (2 * seqCalls + concCalls)) * 10,
    async run() {
      setPhase("auth: starting the upstream and three taskgates");
      const { publicKey, privateKey } = await generateKeyPair("ES256");
      const pem = await exportSPKI(publicKey);
      const upstream = await spawnRole("upstream", "upstream.ts");
      const gateway = (name: string, auth: Record<string, unknown>) =>
        spawnRole(name, "gateway.ts", {
          args: { config: { upstream: { url: upstream.info.url }, host: "127.0.0.1", port: 0, auth }, logLevel: gatewayLogLevel() },
        });
      const jwt = (verifiedCacheMs?: number) => ({
        mode: "jwt",
        jwt: { publicKey: pem, issuer: ISSUER, audience: AUDIENCE, ...(verifiedCacheMs === undefined ? {} : { verifiedCacheMs }) },
      });
      const children: Record<CaseName, Child> = {
        demo: await gateway("taskgate-demo", { mode: "demo" }),
        jwt: await gateway("taskgate-jwt", jwt()),
        "jwt-every": await gateway("taskgate-jwt-every", jwt(0)),
      };
      const token = await new SignJWT({ scope: "tools:call" })
        .setProtectedHeader({ alg: "ES256" })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject("bench-alice")
        .setIssuedAt()
        .setExpirationTime("2h")
        .sign(privateKey);
      const url = (child: Child) => child.info.url as string;
      const calls: Record<CaseName, () => Promise<void>> = {
        demo: modernGreet(url(children.demo), "bench-alice"),
        jwt: modernGreet(url(children.jwt), token),
        "jwt-every": modernGreet(url(children["jwt-every"]), token),
      };
      for (const name of CASES) {
        setPhase(`auth: warming up ${name}`);
        await runBlock(warmup, 16, calls[name]);
      }
      const inTurn: Record<CaseName, number[]> = { demo: [], jwt: [], "jwt-every": [] };
      const cpu: Record<CaseName, { ms: number; calls: number }> = {
        demo: { ms: 0, calls: 0 },
        jwt: { ms: 0, calls: 0 },
        "jwt-every": { ms: 0, calls: 0 },
      };
      for (let round = 0; round < rounds; round++) {
        setPhase(`auth: round ${round + 1} of ${rounds}`);
        for (const name of shuffle(CASES, round)) {
          const before = await children[name].cpu();
          await runBlock(seqCalls, 1, calls[name]);
          await runBlock(concCalls, 16, calls[name]);
          cpu[name].ms += cpuMs(before, await children[name].cpu());
          cpu[name].calls += seqCalls + concCalls;
        }
        for (let turn = 0; turn < seqCalls; turn++) {
          for (const name of shuffle(CASES, round * seqCalls + turn)) {
            const started = performance.now();
            await calls[name]();
            inTurn[name].push(performance.now() - started);
          }
        }
      }
      const p50 = (name: CaseName) => median(inTurn[name]);
      const cpuPerCall = (name: CaseName) => cpu[name].ms / cpu[name].calls;
      out("ES256 tokens; p50 of the calls in turn, CPU per call of taskgate's process over both blocks");
      out(
        table(
          ["case", "p50 ms", "p50 / demo", "taskgate CPU ms per call", "CPU / demo", "CPU - demo, µs"],
          CASES.map((name) => [
            name,
            fixed(p50(name)),
            ratio(p50(name) / p50("demo")),
            fixed(cpuPerCall(name)),
            ratio(cpuPerCall(name) / cpuPerCall("demo")),
            ((cpuPerCall(name) - cpuPerCall("demo")) * 1000).toFixed(0),
          ]),
        ),
      );
    },
  };
}
