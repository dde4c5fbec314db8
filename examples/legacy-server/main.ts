// CLI entry: `tsx examples/legacy-server/main.ts` starts the example legacy MCP server on
// LEGACY_PORT (default 3001) / LEGACY_HOST (default 127.0.0.1), LEGACY_SPEED scales delays,
// prints the endpoint URL and shuts down cleanly on SIGINT/SIGTERM. For tests that run it as a
// process they can stop or kill: LEGACY_UNKNOWN_SESSION_STATUS=400 answers unknown session ids the
// way server-everything does, LEGACY_RESUMABLE=1 gives sessions an event store, and
// LEGACY_EVENTS=stdout prints every server event as one JSON line {"event": name, ...payload}.

import { startLegacyServer } from "./server.js";

/** Every event name server.ts documents on LegacyServer.events. */
const EVENT_NAMES = [
  "session-opened",
  "session-closed",
  "tool-started",
  "tool-finished",
  "cancelled",
  "elicitation-answered",
  "sampling-answered",
  "roots-answered",
  "ping-answered",
];

function unknownSessionStatus(value: string | undefined): 404 | 400 {
  if (value === undefined || value === "" || value === "404") return 404;
  if (value === "400") return 400;
  console.error(`LEGACY_UNKNOWN_SESSION_STATUS must be 404 or 400, got ${JSON.stringify(value)}`);
  process.exit(2);
}

const port = Number(process.env.LEGACY_PORT ?? 3001);
const host = process.env.LEGACY_HOST ?? "127.0.0.1";

const server = await startLegacyServer({
  port,
  host,
  unknownSessionStatus: unknownSessionStatus(process.env.LEGACY_UNKNOWN_SESSION_STATUS),
  resumable: process.env.LEGACY_RESUMABLE === "1",
});
if (process.env.LEGACY_EVENTS === "stdout") {
  for (const name of EVENT_NAMES) {
    server.events.on(name, (payload: object) => console.log(JSON.stringify({ event: name, ...payload })));
  }
}
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
