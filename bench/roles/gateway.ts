// Role "gateway": one taskgate, started exactly as the CLI does (startGateway(ConfigSchema.parse
// (config))), in its own process so process.cpuUsage() and memoryUsage() are taskgate's alone.
// Answers "held" with the number of tasks whose upstream call it holds (from its /healthz), and
// "upstreamProcesses" with the pids of its stdio server processes, and "heapSnapshot" by writing
// one (after a forced GC) to the file it is given, for finding what a scenario left behind.

import { writeHeapSnapshot } from "node:v8";
import pino from "pino";
import { ConfigSchema } from "../../src/config/schema.js";
import { startGateway } from "../../src/gateway.js";
import { roleArgs, serveRole } from "./serveRole.js";

await serveRole("taskgate", async () => {
  const { config, logLevel } = roleArgs<{ config: unknown; logLevel: string }>();
  const gateway = await startGateway(ConfigSchema.parse(config), { log: pino({ level: logLevel }) });
  const health = new URL("/healthz", gateway.url);
  return {
    info: { url: gateway.url, port: gateway.port },
    handlers: {
      held: async () => ((await (await fetch(health)).json()) as { heldTasks: number }).heldTasks,
      /** Pids of the stdio server processes taskgate runs (upstream.command). */
      upstreamProcesses: async () => gateway.upstreamProcesses?.() ?? [],
      heapSnapshot: async (file) => {
        (globalThis as { gc?: () => void }).gc?.();
        return writeHeapSnapshot(String(file));
      },
    },
    close: () => gateway.close(),
  };
});
