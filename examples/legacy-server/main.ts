// CLI entry: `tsx examples/legacy-server/main.ts` starts the example legacy MCP server on
// LEGACY_PORT (default 3001) / LEGACY_HOST (default 127.0.0.1), LEGACY_SPEED scales delays,
// prints the endpoint URL and shuts down cleanly on SIGINT/SIGTERM.

import { startLegacyServer } from "./server.js";

const port = Number(process.env.LEGACY_PORT ?? 3001);
const host = process.env.LEGACY_HOST ?? "127.0.0.1";

const server = await startLegacyServer({ port, host });
console.log(`example legacy MCP server listening on ${server.url}`);

let stopping = false;
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: closing ${server.sessionCount()} session(s)`);
  await server.close();
  process.exit(0);
}
process.on("SIGINT", () => void stop("SIGINT"));
process.on("SIGTERM", () => void stop("SIGTERM"));
