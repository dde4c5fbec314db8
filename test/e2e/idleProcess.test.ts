// A taskgate with nothing to do leaves the machine alone. Idle, its main thread wakes a dozen times a
// second (the event loop's delay sampled every 100 ms, and its own timers), not the 100 times
// prom-client's default sampling would make it: read from the kernel's count of the thread's
// voluntary context switches (Linux's /proc) over a few seconds in which nothing happens. And on
// the memory store it has not loaded what only other configurations use: the Redis and PostgreSQL
// drivers, keyv, web-push, the SDK's HTTP server transport (read from a preload that records each
// package the process loads).

import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { preloadArgs } from "../support/fixtureModules.js";
import { type Child, killHard, spawnGateway, UNREACHABLE_UPSTREAM } from "../support/gatewayChild.js";
import { until } from "../support/waiting.js";

const WINDOW_MS = 3_000;
/** prom-client's default sampling alone is 100 a second. */
const MOST_WAKEUPS_PER_SECOND = 40;
/** Loaded only by the configurations that use them. */
const NOT_FOR_THE_MEMORY_STORE = ["@redis/client", "pg", "keyv", "web-push", "@hono/node-server"];

const noProc = !existsSync("/proc/self/status") && "no /proc here";
const children: ChildProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), "taskgate-idle-"));
const traceFile = join(dir, "packages.txt");
let child: Child;

before(async () => {
  child = await spawnGateway(
    ["--upstream", UNREACHABLE_UPSTREAM, "--auth", "demo"],
    {
      NODE_OPTIONS: preloadArgs("packageTrace").join(" "),
      PACKAGE_TRACE_FILE: traceFile,
    },
    children,
  );
});

after(async () => {
  for (const spawned of children) await killHard(spawned);
  rmSync(dir, { recursive: true, force: true });
});

/** The main thread's voluntary context switches so far: each is a wait the thread went into and woke from. */
function wakeups(pid: number): number {
  const line = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  assert.ok(line, `no voluntary_ctxt_switches in /proc/${pid}/status`);
  return Number(line[1]);
}

test("an idle taskgate wakes its main thread fewer than 40 times a second", { skip: noProc }, async () => {
  const pid = child.process.pid as number;
  await fetch(`${new URL(child.url).origin}/metrics`).then((res) => res.text()); // metrics being read do not change it
  const atStart = wakeups(pid);
  await sleep(WINDOW_MS); // the measurement's window: it waits for nothing to happen
  const perSecond = ((wakeups(pid) - atStart) * 1000) / WINDOW_MS;
  assert.ok(perSecond < MOST_WAKEUPS_PER_SECOND, `an idle taskgate woke ${perSecond.toFixed(1)} times a second`);
});

test("on the memory store it has not loaded the Redis and PostgreSQL drivers, keyv, web-push or the SDK's HTTP server", async () => {
  const loaded = () => (existsSync(traceFile) ? readFileSync(traceFile, "utf8").split("\n").filter(Boolean) : []);
  // The trace works: what every taskgate uses is in it (the hook's messages reach the file a moment after the imports).
  const packages = await until(5_000, "undici and zod in the package trace", () => {
    const names = loaded();
    return names.includes("undici") && names.includes("zod") ? names : undefined;
  });
  assert.deepEqual(
    NOT_FOR_THE_MEMORY_STORE.filter((name) => packages.includes(name)),
    [],
  );
});
