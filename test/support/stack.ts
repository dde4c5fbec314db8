// A stack for one e2e test file: the real example legacy server and a real taskgate in front of it,
// both in process on free loopback ports; and /healthz of a gateway, read as a test sees it.

import type { Logger } from "pino";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import { type ConfigInput, ConfigSchema } from "../../src/config/schema.js";
import { type Gateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/observability/logger.js";

export interface Stack {
  legacy: LegacyServer;
  gateway: Gateway;
  url: string;
  close(): Promise<void>;
}

type StackOverrides = Omit<Partial<ConfigInput>, "upstream"> & { upstream?: Omit<NonNullable<ConfigInput["upstream"]>, "url" | "command"> };

export async function startStack(options: { speed?: number; config?: StackOverrides; log?: Logger } = {}): Promise<Stack> {
  const legacy = await startLegacyServer({ port: 0, speed: options.speed ?? 20 });
  const config = ConfigSchema.parse({
    port: 0,
    auth: { mode: "demo" },
    // Tests close stacks with calls in flight: end them at once rather than after a grace period.
    shutdown: { graceMs: 0 },
    ...options.config,
    upstream: { ...options.config?.upstream, url: legacy.url },
  });
  const gateway = await startGateway(config, { log: options.log ?? createLogger(process.env.TEST_LOG_LEVEL ?? "silent") });
  return {
    legacy,
    gateway,
    url: gateway.url,
    async close() {
      await gateway.close();
      await legacy.close();
    },
  };
}

/** GET /healthz of the gateway whose MCP endpoint is `url`: what it holds right now. */
export async function health(
  url: string,
): Promise<{ status: string; heldTasks: number; heldCalls: number; listenStreams: number; upstreamSessions: number }> {
  const response = await fetch(new URL("/healthz", url));
  return (await response.json()) as Awaited<ReturnType<typeof health>>;
}
