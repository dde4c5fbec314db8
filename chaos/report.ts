// The run's table and report: operations by kind, faults injected by kind, and per promise how
// many things were checked and how many violations were found (with the first few, as evidence).
// Printed at the end of every run; written as Markdown to a file when asked (--report).

import { writeFile } from "node:fs/promises";
import { PROMISES, type PromiseName, type Verdict } from "./checker.js";
import type { Operation } from "./history.js";

export interface RunFacts {
  seconds: number;
  users: number;
  identities: number;
  seed: number;
  ops: Operation[];
  faults: Map<string, number>;
  tasks: number;
  notifications: number;
  wallSeconds: number;
}

export function violationCount(verdict: Verdict): number {
  return Object.values(verdict.violations).reduce((sum, v) => sum + v.length, 0);
}

export function table(facts: RunFacts, verdict: Verdict): string {
  const outcomes = new Map<string, number>();
  for (const op of facts.ops) outcomes.set(op.outcome, (outcomes.get(op.outcome) ?? 0) + 1);
  const byOp = new Map<string, number>();
  for (const op of facts.ops) byOp.set(`${op.op} ${op.method}`, (byOp.get(`${op.op} ${op.method}`) ?? 0) + 1);
  const faults = [...facts.faults].map(([k, n]) => `${k} ${n}`).join(", ");
  const lines = [
    `chaos run: ${facts.seconds} s, ${facts.users} users (${facts.identities} identities), seed ${facts.seed}; took ${facts.wallSeconds} s`,
    "",
    `operations: ${facts.ops.length} (${[...outcomes].map(([k, n]) => `${k} ${n}`).join(", ")}); tasks handed out: ${facts.tasks}; task notifications: ${facts.notifications}`,
    `  ${[...byOp]
      .sort()
      .map(([k, n]) => `${k}: ${n}`)
      .join("; ")}`,
    `faults injected: ${[...facts.faults.values()].reduce((a, b) => a + b, 0)} (${faults || "none"})`,
    "",
    "| promise | checked | violations |",
    "| --- | ---: | ---: |",
  ];
  for (const name of Object.keys(PROMISES) as PromiseName[]) {
    lines.push(`| ${PROMISES[name]} | ${verdict.checked[name]} | ${verdict.violations[name].length} |`);
  }
  for (const name of Object.keys(PROMISES) as PromiseName[]) {
    const found = verdict.violations[name];
    if (found.length === 0) continue;
    lines.push("", `violations of "${PROMISES[name]}" (first 10 of ${found.length}):`);
    for (const v of found.slice(0, 10)) lines.push(`  - ${v}`);
  }
  return lines.join("\n");
}

export async function writeReport(path: string, facts: RunFacts, verdict: Verdict, historyPath: string | undefined): Promise<void> {
  const text = [
    "# taskgate chaos run",
    "",
    `Run at ${new Date().toISOString()}. Repeat it: \`npm run chaos -- --seconds ${facts.seconds} --users ${facts.users} --seed ${facts.seed}\`.`,
    historyPath ? `History (one JSON line per operation, notification, fault and upstream event): \`${historyPath}\`.` : "",
    "",
    "```text",
    table(facts, verdict),
    "```",
    "",
  ].join("\n");
  await writeFile(path, text);
}
