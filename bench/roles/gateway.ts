// Role "gateway": one taskgate, started exactly as the CLI does (startGateway(ConfigSchema.parse
// (config))), in its own process so process.cpuUsage() and memoryUsage() are taskgate's alone.
// Answers "held" with the number of tasks whose upstream call it holds.
// One harness setting: the HTTP server's keepAliveTimeout is raised from Node's 5 s to 120 s. When
// taskgate's event loop stalls (seen: 13–25 s at 5–6k held tasks) past that timeout while a client
// has already sent its next request on the idle socket, Node destroys the socket and the client
// gets ECONNRESET; the bench's client drops idle sockets after 2 s, so the longer server timeout
// changes nothing else. The stalls themselves are reported ("loop stall ms" in the scale scenario).

import pino from "pino";
import { ConfigSchema } from "../../src/config/schema.js";
import { startGateway } from "../../src/gateway.js";
import { roleArgs, serveRole } from "./serveRole.js";

const SERVER_KEEP_ALIVE_MS = 120_000;

await serveRole("taskgate", async () => {
  const { config, logLevel } = roleArgs<{ config: unknown; logLevel: string }>();
  const gateway = await startGateway(ConfigSchema.parse(config), { log: pino({ level: logLevel }) });
  gateway.server.keepAliveTimeout = SERVER_KEEP_ALIVE_MS;
  return {
    info: { url: gateway.url, port: gateway.port },
    handlers: { held: () => gateway.tasks.heldCount() },
    close: () => gateway.close(),
  };
});
