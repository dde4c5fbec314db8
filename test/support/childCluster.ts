// Taskgate instances as real child processes (GatewayProcesses) sharing the test file's Redis
// (redisServer.ts) under a fresh key prefix, in front of one real example legacy server, and the
// slow_echo task such tests hand to an instance before they freeze or kill it: it runs upstream for
// two minutes, longer than anything the test waits for. close() stops the processes, then the server.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import type { ToolStartedEvent } from "../../examples/legacy-server/state.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { rpcWithin } from "./boundedRpc.js";
import { closeAll } from "./closeAll.js";
import { GatewayProcesses } from "./gatewayProcess.js";
import { ANSWER_WITHIN_MS, UPSTREAM_LIMITS } from "./limits.js";
import { resultOf, TASKS_CAPS } from "./mcpClient.js";
import { testRedisUrl } from "./redisServer.js";
import { nextEvent } from "./waiting.js";

export interface ChildCluster {
  legacy: LegacyServer;
  processes: GatewayProcesses;
  /** The shared store's config, with this lease. */
  store(leaseMs: number): JsonObject;
  /** A gateway's config: the shared store, the legacy server as its upstream, slow_echo always a task. */
  config(leaseMs: number): JsonObject;
  /** A slow_echo task on `url` (an MCP endpoint), once it runs upstream: its id and its upstream call. */
  startTask(url: string): Promise<{ taskId: string; call: ToolStartedEvent }>;
  close(): Promise<void>;
}

/** `speed`: the legacy server's (its tools' delays divided by it; default 1). */
export async function startChildCluster(options: { speed?: number } = {}): Promise<ChildCluster> {
  const redisUrl = await testRedisUrl();
  const prefix = `taskgate-test-${randomUUID()}`;
  const legacy = await startLegacyServer({ port: 0, ...options });
  const processes = new GatewayProcesses();
  const store = (leaseMs: number) => ({ kind: "redis", url: redisUrl, prefix, leaseMs });
  return {
    legacy,
    processes,
    store,
    config: (leaseMs) => ({
      store: store(leaseMs),
      upstream: { url: legacy.url, ...UPSTREAM_LIMITS },
      tasks: { tools: { slow_echo: "always" } },
    }),
    async startTask(url) {
      const started = nextEvent<ToolStartedEvent>(legacy.events, "tool-started", (e) => e.tool === "slow_echo", ANSWER_WITHIN_MS);
      const slowEcho = { name: "slow_echo", arguments: { text: "x", ms: 120_000 } };
      const created = await rpcWithin(ANSWER_WITHIN_MS, url, "tools/call", slowEcho, { capabilities: TASKS_CAPS });
      assert.equal(resultOf(created)?.status, "working", JSON.stringify(created.message));
      return { taskId: resultOf(created).taskId as string, call: await started };
    },
    close: () =>
      closeAll(
        () => processes.close(),
        () => legacy.close(),
      ),
  };
}
