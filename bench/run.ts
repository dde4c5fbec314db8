// npm run bench [-- scenario...]: taskgate's measuring instruments. Each scenario compares
// taskgate with a baseline measured in the same run (interleaved, so machine noise hits every
// case alike), prints ratios and the goal lines of issue 14, runs under a watchdog and leaves
// nothing behind (child processes, temp dirs, Redis keys under a fresh prefix).
//
//   inline     tools/call greet through taskgate vs direct on the same upstream, and server/discover
//   tasks-get  tasks/get CPU per request: taskgate vs a bare node:http floor vs a native v2-SDK peer
//   scale      1k / 5k / 10k held tasks: create rate, tasks/get p50/p99, memory per task, cancel all,
//              memory and upstream connections afterwards; RSS kept vs a bare Node process that
//              held and aborted as many undici streams (the floor)
//   held       5,000 held calls streaming progress on an upstream slowed by SIGSTOP bursts, then all
//              cancelled: no task failed while its stream was alive, every cancel reached the upstream
//              or was reported, nothing left running upstream
//   tasks      the task machinery per request: call→task and tasks/get vs server/discover
//   stdio      a stdio upstream (upstream.command): process start-up, RSS per process, 50 identities at once
//   fleet      1 vs 50 backends (HTTP and stdio): start-up, idle memory per backend, routing overhead of a call
//   listing    a page of 50 of a user's tasks among 1,000 vs 100,000 in the store (memory, redis; on redis also GET /tasks)
//   auth       the bearer check on a quick tools/call: demo vs jwt (tokens remembered) vs jwt verifying every request
//
// Select scenarios by argument (npm run bench -- inline scale) or BENCH_SCENARIOS=inline,scale;
// default: all, in the order above. Knobs: see docs/benchmarks.md.

import "./lib/clientDispatcher.js";
import { execFileSync } from "node:child_process";
import { cpus, loadavg } from "node:os";
import { benchBuild, buildOnce } from "./lib/build.js";
import { crashes, killAll, stopAll, takeWarnings } from "./lib/children.js";
import { runCleanups } from "./lib/cleanup.js";
import { gatewayLogLevel, positiveInt, storeKind } from "./lib/knobs.js";
import { describeError } from "./lib/modernClient.js";
import { armWatchdog, currentPhase, disarmWatchdog, setPhase } from "./lib/watchdog.js";
import { authScenario } from "./scenarios/auth.js";
import { fleetScenario } from "./scenarios/fleet.js";
import { heldScenario } from "./scenarios/held.js";
import { inlineScenario } from "./scenarios/inline.js";
import { listingScenario } from "./scenarios/listing.js";
import { scaleScenario } from "./scenarios/scale.js";
import { out, type Scenario } from "./scenarios/scenario.js";
import { stdioScenario } from "./scenarios/stdio.js";
import { tasksScenario } from "./scenarios/tasks.js";
import { tasksGetScenario } from "./scenarios/tasksGet.js";

const ALL: Record<string, () => Scenario> = {
  inline: inlineScenario,
  "tasks-get": tasksGetScenario,
  scale: scaleScenario,
  held: heldScenario,
  tasks: tasksScenario,
  stdio: stdioScenario,
  fleet: fleetScenario,
  listing: listingScenario,
  auth: authScenario,
};

/** The scenarios named by the arguments or BENCH_SCENARIOS (default all), with their knobs read. */
function selected(): Scenario[] {
  const args = process.argv
    .slice(2)
    .flatMap((a) => a.split(","))
    .filter((a) => a !== "");
  const names = args.length > 0 ? args : (process.env.BENCH_SCENARIOS ?? "").split(",").filter((a) => a !== "");
  const chosen = names.length === 0 || names.includes("all") ? Object.keys(ALL) : names;
  return chosen.map((name) => {
    const make = ALL[name];
    if (!make) throw new Error(`unknown scenario '${name}': choose from ${Object.keys(ALL).join(", ")} (or all)`);
    return make();
  });
}

function commit(): string {
  try {
    const rev = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "examples"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    return dirty ? `${rev} (+ uncommitted changes in src/ or examples/)` : rev;
  } catch {
    return "unknown";
  }
}

let scenarios: Scenario[];
let timeoutS: number | undefined;
let header: string;
try {
  scenarios = selected();
  timeoutS = process.env.BENCH_TIMEOUT_S ? positiveInt("BENCH_TIMEOUT_S", 1) : undefined;
  header =
    `store ${storeKind()}, taskgate log level ${gatewayLogLevel()}, loopback only; every server in its own process, ` +
    (benchBuild() === "compiled" ? "compiled by tsc (as shipped)" : "run from source under tsx");
  buildOnce();
} catch (error) {
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
out(`taskgate bench — ${new Date().toISOString()}, commit ${commit()}`);
out(
  `node ${process.version}, ${process.platform}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
out(header);
for (const scenario of scenarios) out(`  ${scenario.name.padEnd(10)} ${scenario.sizes()}`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    process.stderr.write(`\nbench: ${signal}: stopping the processes under test and cleaning up\n`);
    killAll();
    void runCleanups().finally(() => process.exit(130));
  });
}

let failed = 0;
for (const scenario of scenarios) {
  out();
  out(`== ${scenario.name}: ${scenario.title} ==`);
  const budgetMs = timeoutS !== undefined ? timeoutS * 1000 : scenario.budgetMs();
  armWatchdog(scenario.name, budgetMs, async () => {
    killAll();
    await runCleanups();
  });
  const started = performance.now();
  try {
    await scenario.run();
  } catch (error) {
    failed++;
    out(`FAILED: scenario '${scenario.name}' while ${currentPhase()}: ${describeError(error)}`);
    for (const crash of crashes()) out(crash);
  } finally {
    setPhase("cleaning up");
    await stopAll();
    await runCleanups();
    disarmWatchdog();
  }
  const warnings = takeWarnings();
  if (warnings.length > 0) out(`warnings printed by the processes under test: ${warnings.join("; ")}`);
  out(`(${scenario.name} took ${((performance.now() - started) / 1000).toFixed(1)} s, budget ${Math.round(budgetMs / 1000)} s)`);
}
process.exit(failed > 0 ? 1 : 0);
