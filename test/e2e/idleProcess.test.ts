// An idle taskgate leaves the machine alone: with nothing to do, its main thread wakes a dozen
// times a second (the event loop's delay sampled every 100 ms, and its own timers), not the 100
// times prom-client's default sampling would make it. Read from the kernel's count of the main
// thread's voluntary context switches (Linux's /proc), over a few seconds in which nothing happens.

import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { after, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { killHard, spawnGateway } from "../support/gatewayChild.js";

const UNREACHABLE_UPSTREAM = "http://127.0.0.1:1/mcp"; // serve does not call the upstream before a request
const WINDOW_MS = 3_000;
/** prom-client's default sampling alone is 100 a second. */
const MOST_WAKEUPS_PER_SECOND = 40;

const children: ChildProcess[] = [];
after(async () => {
  for (const child of children) await killHard(child);
});

/** The main thread's voluntary context switches so far: each is a wait the thread went into and woke from. */
function wakeups(pid: number): number {
  const line = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  assert.ok(line, `no voluntary_ctxt_switches in /proc/${pid}/status`);
  return Number(line[1]);
}

test("an idle taskgate wakes its main thread fewer than 40 times a second", {
  skip: !existsSync("/proc/self/status") && "no /proc here",
}, async () => {
  const child = await spawnGateway(["--upstream", UNREACHABLE_UPSTREAM, "--auth", "demo"], {}, children);
  const pid = child.process.pid as number;
  await fetch(`${new URL(child.url).origin}/metrics`).then((res) => res.text()); // metrics being read do not change it
  const before = wakeups(pid);
  await sleep(WINDOW_MS); // the measurement's window: it waits for nothing to happen
  const perSecond = ((wakeups(pid) - before) * 1000) / WINDOW_MS;
  assert.ok(perSecond < MOST_WAKEUPS_PER_SECOND, `an idle taskgate woke ${perSecond.toFixed(1)} times a second`);
});
