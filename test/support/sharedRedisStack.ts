// Several taskgate instances sharing one real Redis (the test file's own redis-server, redisServer.ts;
// a fresh key prefix per stack) or one real
// PostgreSQL database (store "postgres": the caller's fresh database) in front of one real example
// legacy server: three in process (a, b, c), more on demand (another(); stop() ends one early, as a
// restart's first half), and any started as real child processes (pushed to `children`, so a test
// can SIGKILL them). close() kills the children and closes the rest.

import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import { type ConfigInput, ConfigSchema } from "../../src/config/schema.js";
import { type Gateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/observability/logger.js";
import { killHard } from "./gatewayChild.js";
import { testRedisUrl } from "./redisServer.js";

export interface SharedRedisStack {
  legacy: LegacyServer;
  a: Gateway;
  b: Gateway;
  c: Gateway;
  prefix: string;
  /** The command-line flags that start one more instance on the same store. */
  storeArgs: string[];
  children: ChildProcess[];
  /** One more instance on the same store (closed by close()). */
  another(): Promise<Gateway>;
  /** Closes one instance now (close() then leaves it alone). */
  stop(gateway: Gateway): Promise<void>;
  close(): Promise<void>;
}

export interface SharedRedisOptions {
  /** The legacy server's speed factor. */
  speed: number;
  leaseMs: number;
  /** The rest of the gateways' config. */
  config?: Omit<Partial<ConfigInput>, "upstream" | "store" | "port" | "auth">;
  /** A PostgreSQL database url instead of Redis. */
  postgresUrl?: string;
}

export async function startSharedRedisStack(options: SharedRedisOptions): Promise<SharedRedisStack> {
  const prefix = `taskgate-test-${randomUUID()}`;
  const redisUrl = options.postgresUrl === undefined ? await testRedisUrl() : "";
  const legacy = await startLegacyServer({ port: 0, speed: options.speed });
  const start = () =>
    startGateway(
      ConfigSchema.parse({
        port: 0,
        auth: { mode: "demo" },
        ...options.config,
        upstream: { url: legacy.url },
        store:
          options.postgresUrl === undefined
            ? { kind: "redis", url: redisUrl, prefix, leaseMs: options.leaseMs }
            : { kind: "postgres", url: options.postgresUrl, leaseMs: options.leaseMs },
      }),
      { log: createLogger(process.env.TEST_LOG_LEVEL ?? "silent") },
    );
  const a = await start();
  const b = await start();
  const c = await start();
  const running = new Set<Gateway>([a, b, c]);
  const children: ChildProcess[] = [];
  const storeArgs = ["--store", options.postgresUrl === undefined ? "redis" : "postgres", "--store-url", options.postgresUrl ?? redisUrl];
  return {
    legacy,
    a,
    b,
    c,
    prefix,
    storeArgs,
    children,
    async another() {
      const gateway = await start();
      running.add(gateway);
      return gateway;
    },
    async stop(gateway) {
      if (running.delete(gateway)) await gateway.close();
    },
    async close() {
      for (const child of children) await killHard(child);
      for (const gateway of running) await gateway.close();
      running.clear();
      await legacy.close();
    },
  };
}
