// `npm start` under a supervisor: SIGTERM sent to npm (the process a supervisor started) reaches
// taskgate, which logs "shutting down" and stops listening; nothing is left orphaned. npm runs
// the script through a shell, so this pins the `exec` in package.json's start script.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { after, test } from "node:test";
import { REPO } from "../support/repoRoot.js";
import { eventually } from "../support/waiting.js";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const LIMIT_MS = 60_000;

function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith("TASKGATE_") && key !== "PORT") env[key] = value;
  return env;
}

/** Process groups started here (npm and what it runs), killed if a test leaves them behind. */
const groups: number[] = [];
after(() => {
  for (const pid of groups) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

test("SIGTERM to npm start stops the gateway: 'shutting down', 'taskgate stopped', port closed", async () => {
  const child = spawn(npm, ["start", "--silent", "--", "--port", "0", "--log-format", "json"], {
    cwd: REPO,
    env: cleanEnv(),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // its own process group, so cleanup can reach whatever npm started
  });
  groups.push(child.pid as number);
  const lines: Array<Record<string, unknown>> = [];
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const listening = await new Promise<{ url: string }>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`npm start did not log "taskgate listening" within ${LIMIT_MS} ms; stderr: ${stderr}`)),
      LIMIT_MS,
    );
    createInterface({ input: child.stdout }).on("line", (line) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return; // the demo's banner
      }
      lines.push(entry);
      if (entry.msg === "taskgate listening") {
        clearTimeout(timer);
        resolve({ url: entry.url as string });
      }
    });
  });

  const exited = new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm did not exit within ${LIMIT_MS} ms of SIGTERM`)), LIMIT_MS);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
  child.kill("SIGTERM");
  await exited;

  assert.ok(
    lines.some((line) => line.event === "gateway.stopping" && line.signal === "SIGTERM"),
    "taskgate logged shutting down",
  );
  assert.ok(
    lines.some((line) => line.event === "gateway.stopped"),
    "taskgate logged stopped",
  );
  await assert.rejects(fetch(new URL("/healthz", listening.url)), "nothing listens on the demo's port any more");
  // Nothing npm started is left: signal 0 to the process group fails once the group is empty.
  // npm may exit a moment before the gateway it ran finishes its own exit, so allow a few seconds.
  const groupGone = (): boolean => {
    try {
      process.kill(-(child.pid as number), 0);
      return false;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "ESRCH";
    }
  };
  await eventually(groupGone, "no process of npm start is left 10 s after npm exited", 10_000);
});
