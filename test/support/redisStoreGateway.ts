// A gateway in process (startFaultGateway: its logs captured) whose task store is a real,
// throwaway redis-server of its own (RedisProcess, so a test can SIGSTOP or stop it), in front of
// the real example legacy server: slow_echo is always a task, the store's commands and the
// upstream have the short limits of limits.ts. close() resumes a paused Redis first (a stopped
// process cannot close its connections), then closes the gateway, the server and Redis.

import { randomUUID } from "node:crypto";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import { closeAll } from "./closeAll.js";
import { type FaultGateway, startFaultGateway } from "./inProcessGateway.js";
import { STORE_COMMAND_TIMEOUT_MS, UPSTREAM_LIMITS } from "./limits.js";
import { RedisProcess } from "./redisServer.js";

export interface RedisStoreGateway {
  redis: RedisProcess;
  legacy: LegacyServer;
  gw: FaultGateway;
  close(): Promise<void>;
}

export async function startRedisStoreGateway(): Promise<RedisStoreGateway> {
  const redis = await RedisProcess.start();
  let legacy: LegacyServer | undefined;
  let gw: FaultGateway;
  try {
    legacy = await startLegacyServer({ port: 0 });
    gw = await startFaultGateway(legacy.url, {
      upstream: { ...UPSTREAM_LIMITS },
      store: { kind: "redis", url: redis.url, prefix: `faults-${randomUUID()}`, commandTimeoutMs: STORE_COMMAND_TIMEOUT_MS },
      tasks: { tools: { slow_echo: "always" } },
    });
  } catch (error) {
    await closeAll(
      () => legacy?.close(),
      () => redis.close(),
    );
    throw error;
  }
  return {
    redis,
    legacy: legacy as LegacyServer,
    gw,
    close: async () => {
      if (redis.isRunning()) redis.resume();
      await closeAll(
        () => gw.close(),
        () => legacy?.close(),
        () => redis.close(),
      );
    },
  };
}
