// Runs `taskgate serve` as a real child process for tests that must kill or restart a gateway:
// resolves once its pino "taskgate listening" line is on stdout. The CLI runs the way the tests
// run: compiled (npm test runs .test-build/) or from source through tsx.

import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { JsonObject } from "../../src/protocol/wire.js";
import { BUILD_ROOT, REPO } from "./repoRoot.js";

/** Node arguments that run the taskgate CLI of this tree (the source, never a stale dist/). */
export function cliArgs(args: string[]): string[] {
  const compiled = join(BUILD_ROOT, "src", "cli.js");
  return existsSync(compiled) ? [compiled, ...args] : ["--import", "tsx", join(BUILD_ROOT, "src", "cli.ts"), ...args];
}

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

/** Spawns `taskgate serve` and resolves once its pino "taskgate listening" line is on stdout. */
export function spawnGateway(args: string[], env: Record<string, string>, children: ChildProcess[]): Promise<Child> {
  const child = spawn(process.execPath, cliArgs(["serve", ...args]), {
    cwd: REPO,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const lines: JsonObject[] = [];
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`taskgate did not start within 15 s; stderr: ${stderr}`)), 15_000);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`taskgate exited before listening (code ${code}, signal ${signal}); stderr: ${stderr}`));
    });
    createInterface({ input: child.stdout! }).on("line", (line) => {
      let entry: JsonObject;
      try {
        entry = JSON.parse(line) as JsonObject;
      } catch {
        return; // not a log line
      }
      lines.push(entry);
      if (entry.msg === "taskgate listening") {
        clearTimeout(timer);
        child.removeAllListeners("exit");
        resolve({ process: child, url: entry.url as string, lines });
      }
    });
  });
}

export function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}
