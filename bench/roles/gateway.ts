// Role "gateway": one taskgate, started exactly as the CLI does (startGateway(ConfigSchema.parse
// (config))), in its own process so process.cpuUsage() and memoryUsage() are taskgate's alone.
// Answers "held" with the number of tasks whose upstream call it holds.
// Harness settings on taskgate's HTTP server (not its config): Node's timeouts are raised to
// 10 minutes (keepAliveTimeout from 5 s, headersTimeout from 60 s, requestTimeout from 300 s).
// taskgate's event loop stalls at thousands of held tasks (seen on main: 13 s, 25 s, 70 s at
// 5.5k–9.5k); a stall past keepAliveTimeout while a client's next request already waits on the
// idle socket makes Node destroy the socket (ECONNRESET), one past headersTimeout answers 408.
// The bench's client drops idle sockets after 2 s, so the longer timeouts change nothing else;
// the stalls themselves are reported ("loop stall ms" in the scale scenario).

import pino from "pino";
import { ConfigSchema } from "../../src/config/schema.js";
import { startGateway } from "../../src/gateway.js";
import { roleArgs, serveRole } from "./serveRole.js";

const SERVER_TIMEOUT_MS = 600_000;

await serveRole("taskgate", async () => {
  const { config, logLevel } = roleArgs<{ config: unknown; logLevel: string }>();
  const gateway = await startGateway(ConfigSchema.parse(config), { log: pino({ level: logLevel }) });
  gateway.server.keepAliveTimeout = SERVER_TIMEOUT_MS;
  gateway.server.headersTimeout = SERVER_TIMEOUT_MS;
  gateway.server.requestTimeout = SERVER_TIMEOUT_MS;
  return {
    info: { url: gateway.url, port: gateway.port },
    handlers: { held: () => gateway.tasks.heldCount() },
    close: () => gateway.close(),
  };
});
