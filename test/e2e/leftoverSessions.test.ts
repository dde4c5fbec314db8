// After kill -9 of a taskgate on Redis, the upstream sessions the dead process left are closed
// (DELETE), so the calls still running on them end upstream: by the next start — also for a fleet
// backend (each backend keeps its own ledger of sessions) — and by an instance that was already
// running when the other died (every instance looks again each lease). Found by the chaos run:
// build_report calls of killed instances stayed open upstream for ever. Real child processes, a
// real legacy server, a fresh key prefix on Redis.

import { afterEach, beforeEach, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import type { SessionEvent } from "../../examples/legacy-server/state.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { type ChildCluster, startChildCluster } from "../support/childCluster.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import type { GatewayProcesses } from "../support/gatewayProcess.js";
import { ANSWER_WITHIN_MS, UPSTREAM_LIMITS } from "../support/limits.js";
import { needsRedis } from "../support/redisServer.js";
import { nextEvent, within } from "../support/waiting.js";

failIfStillRunning();

const LEASE_MS = 1_000;
/** Bounds the second process's start (its own limit is the launcher's). */
const START_MS = 60_000;

describe("upstream sessions a killed instance left on Redis are closed by the next start", needsRedis, () => {
  let cluster: ChildCluster;
  let legacy: LegacyServer;
  let processes: GatewayProcesses;
  beforeEach(async () => {
    cluster = await startChildCluster();
    ({ legacy, processes } = cluster);
  });
  afterEach(() => cluster?.close());

  const store = () => cluster.store(LEASE_MS);

  /**
   * kill -9 of `config`'s first process holding a task, and the dead one's session closed within
   * `ms` by a second process: started after the kill, or (`survivor`) already running before it.
   */
  async function killAndRestart(config: JsonObject, taskUrl: (url: string) => string, ms: number, survivor = false): Promise<void> {
    const first = await processes.start(config, "first");
    if (survivor) await processes.start(config, "second");
    const { call: started } = await cluster.startTask(taskUrl(first.url));
    await first.stop("SIGKILL", 5_000);
    // Listening from the kill on; the limit `ms` counts from the second start being ready (a start on a
    // loaded machine takes seconds, and is not what is measured), the listener's own limit bounds the start too.
    const closed = nextEvent<SessionEvent>(legacy.events, "session-closed", (e) => e.sessionId === started.sessionId, ms + START_MS);
    if (!survivor) await processes.start(config, "second");
    await within(ms, `upstream session ${started.sessionId} of the killed process closed`, closed);
  }

  test("a fleet backend: its sessions are closed on that backend", async () => {
    const other = await startLegacyServer({ port: 0 });
    try {
      const backend = { ...UPSTREAM_LIMITS, tasks: { tools: { slow_echo: "always" } } };
      const config = { store: store(), backends: { other: { url: other.url, ...backend }, legacy: { url: legacy.url, ...backend } } };
      // The first start's lease must be over before the second looks, or it waits one more lease.
      await killAndRestart(config, (url) => `${url}/legacy`, LEASE_MS * 3 + ANSWER_WITHIN_MS);
    } finally {
      await other.close();
    }
  });

  test("an instance running when the other dies closes the dead one's sessions once its lease has run out", async () => {
    const config = cluster.config(LEASE_MS);
    await killAndRestart(config, (url) => url, LEASE_MS * 3 + ANSWER_WITHIN_MS, true);
  });
});
