// The demo: the bundled example legacy server and a taskgate in front of it (config/demo.yaml:
// in-memory store, demo identity). Run by `taskgate demo` and `npm start`. It lives beside the
// example server, not in src/, so production code never depends on an example: the CLI loads
// this module only when the demo command runs.

import type { Logger } from "pino";
import type { Config } from "../src/config/schema.js";
import { type Gateway, startGateway } from "../src/gateway.js";
import { startLegacyServer } from "./legacy-server/server.js";

export interface Demo {
  gateway: Gateway;
  banner: string;
  close(): Promise<void>;
}

/**
 * `configure` turns the example server's URL into the gateway's Config (the CLI's loading rules);
 * `logger`, when given, makes the gateway's logger from that Config (the CLI's log format).
 */
export async function startDemo(options: {
  legacyPort: number;
  configure: (upstreamUrl: string) => Config;
  logger?: (config: Config) => Logger;
}): Promise<Demo> {
  const legacy = await startLegacyServer({ port: options.legacyPort });
  let gateway: Gateway;
  try {
    const config = options.configure(legacy.url);
    gateway = await startGateway(config, options.logger ? { log: options.logger(config) } : {});
  } catch (error) {
    await legacy.close();
    throw error;
  }
  return {
    gateway,
    banner: demoBanner(gateway.url, legacy.url),
    async close() {
      await gateway.close();
      await legacy.close();
    },
  };
}

function demoBanner(url: string, legacyUrl: string): string {
  return `
taskgate demo is running
  modern MCP endpoint:  ${url}   (MCP 2026-07-28 + io.modelcontextprotocol/tasks)
  legacy upstream:      ${legacyUrl}   (example server, official SDK 1.x)
  identity:             demo mode: the bearer token is the user's name

Try it:
  curl -s ${url} \\
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: server/discover' \\
    -H 'Authorization: Bearer alice' \\
    -d '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'

The whole walkthrough (a task, its question, the answer): README.md, or examples/walkthrough.sh
Stop with Ctrl-C.
`;
}
