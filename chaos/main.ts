// npm run chaos [-- --seconds N --users U --seed S --faults K,… --report FILE --history FILE]: one chaos run
// against a three-instance taskgate cluster (see docs/chaos.md); prints the checker's table and
// exits 1 on any violation (2 when the run itself could not be carried out).

import { Command } from "commander";
import { FAULT_KINDS, type FaultKind } from "./faults.js";
import { table, violationCount, writeReport } from "./report.js";
import { runChaos } from "./run.js";

const program = new Command("chaos")
  .option("--seconds <n>", "how long the users and the faults run", "60")
  .option("--users <n>", "simulated users", "50")
  .option("--seed <n>", "seed of the fault schedule and of every user's choices", "1")
  .option("--faults <kinds>", `the fault kinds to draw from, comma-separated (default all: ${FAULT_KINDS.join(", ")})`)
  .option("--history <file>", "write the history (JSON lines) here")
  .option("--report <file>", "write the table as a Markdown report here")
  .parse();
const opts = program.opts<{ seconds: string; users: string; seed: string; faults?: string; history?: string; report?: string }>();

try {
  const options = { seconds: Number(opts.seconds), users: Number(opts.users), seed: Number(opts.seed) };
  for (const [name, value] of Object.entries(options)) {
    if (!Number.isInteger(value) || value < (name === "seed" ? 0 : 1)) throw new Error(`--${name} must be a positive integer`);
  }
  const faultKinds = opts.faults?.split(",").map((kind) => {
    if (!(FAULT_KINDS as readonly string[]).includes(kind)) throw new Error(`--faults: unknown kind '${kind}' (${FAULT_KINDS.join(", ")})`);
    return kind as FaultKind;
  });
  const { facts, verdict } = await runChaos({
    ...options,
    ...(faultKinds ? { faultKinds } : {}),
    ...(opts.history ? { historyPath: opts.history } : {}),
    log: (line) => process.stderr.write(`chaos: ${line}\n`),
  });
  const text = table(facts, verdict);
  process.stdout.write(`${text}\n`);
  if (opts.report) await writeReport(opts.report, facts, verdict, opts.history);
  process.exit(violationCount(verdict) > 0 ? 1 : 0);
} catch (error) {
  process.stderr.write(
    `chaos: the run could not be carried out: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(2);
}
