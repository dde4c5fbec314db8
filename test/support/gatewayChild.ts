// Runs `taskgate serve` as a real child process for tests that must kill or restart a gateway:
// resolves once its pino "taskgate listening" line is on stdout. The CLI runs the way the tests
// run: compiled (npm test runs .test-build/) or from source through tsx.

import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { JsonObject } from "../../src/protocol/wire.js";
import { ManagedProcess } from "./processes.js";
import { BUILD_ROOT, REPO } from "./repoRoot.js";

/** Node arguments that run the taskgate CLI of this tree (the source, never a stale dist/). */
export function cliArgs(args: string[]): string[] {
  const compiled = join(BUILD_ROOT, "src", "cli.js");
  return existsSync(compiled) ? [compiled, ...args] : ["--import", "tsx", join(BUILD_ROOT, "src", "cli.ts"), ...args];
}

/** An upstream nobody answers at: `serve` does not call the upstream before a request, so it starts in front of it. */
export const UNREACHABLE_UPSTREAM = "http://127.0.0.1:1/mcp";

export interface Child {
  process: ChildProcess;
  url: string;
  lines: JsonObject[];
}

/** Environment for the child: ours without any TASKGATE_* (unknown ones are errors), plus `extra`. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("TASKGATE_")) env[k] = v;
  return { ...env, ...extra };
}

/** Spawns `taskgate serve` (processes.ts) and resolves once its pino "taskgate listening" line is on stdout. */
export async function spawnGateway(args: string[], env: Record<string, string>, children: ChildProcess[]): Promise<Child> {
  const lines: JsonObject[] = [];
  const managed = await ManagedProcess.start({
    name: "taskgate serve",
    command: process.execPath,
    args: cliArgs(["serve", ...args]),
    cwd: REPO,
    env: childEnv(env),
    ready: /"msg":"taskgate listening"/,
    onLine: (line) => {
      try {
        lines.push(JSON.parse(line) as JsonObject);
      } catch {
        // not a log line
      }
    },
    onSpawn: (child) => children.push(child),
  });
  const listening = lines.find((entry) => entry.msg === "taskgate listening");
  return { process: managed.child, url: String(listening?.url), lines };
}

export function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}
