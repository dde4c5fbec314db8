// Starts a real taskgate (startGateway, the config parsed by ConfigSchema like the CLI does, demo
// auth, a free loopback port) in front of a given legacy MCP endpoint. Logs are silent unless
// TEST_LOG_LEVEL is set.

import { type ConfigInput, ConfigSchema } from "../../src/config/schema.js";
import { type Gateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/observability/logger.js";

export type GatewayOptions = Omit<Partial<ConfigInput>, "upstream">;
/** The upstream options besides where it is (url or command). */
type UpstreamOptions = { upstream?: Omit<NonNullable<ConfigInput["upstream"]>, "url" | "command"> };

export function startGatewayInFront(upstreamUrl: string, options: GatewayOptions & UpstreamOptions = {}): Promise<Gateway> {
  const { upstream, ...rest } = options;
  const config = ConfigSchema.parse({ port: 0, auth: { mode: "demo" }, ...rest, upstream: { ...upstream, url: upstreamUrl } });
  return startGateway(config, { log: createLogger(process.env.TEST_LOG_LEVEL ?? "silent") });
}

/** A taskgate that starts `command` (argv) as its stdio upstream, one process per upstream session. */
export function startGatewayOnCommand(command: string[], options: GatewayOptions & UpstreamOptions = {}): Promise<Gateway> {
  const { upstream, ...rest } = options;
  const config = ConfigSchema.parse({ port: 0, auth: { mode: "demo" }, ...rest, upstream: { ...upstream, command } });
  return startGateway(config, { log: createLogger(process.env.TEST_LOG_LEVEL ?? "silent") });
}
