// Endpoints: what the instance serves its MCP clients with — the single upstream at `path`, or a
// fleet of backends (and its federated endpoint). The gateway asks it, per request, which MCP
// endpoint a path is, and reads its metrics, readiness checks and held parts through it; both
// shapes implement it, so the rest of the assembly does not know which one runs.

import type express from "express";
import type { HealthOptions } from "../http/health.js";
import type { MetricsSource } from "../http/metricsEndpoint.js";
import type { BackendPart } from "./backendPart.js";
import type { Door } from "./frontSide.js";

export interface Endpoints {
  /** The MCP endpoint at a request path (without its query), if any. */
  doorAt(path: string): Door | undefined;
  /** The upstreams served now (for commands from other instances, counts, shutdown). */
  parts(): readonly BackendPart[];
  metrics: MetricsSource;
  health: HealthOptions;
  /** More side doors. */
  mount?(app: express.Express): void;
  /** For the start-up log line. */
  describe(): Record<string, unknown>;
  /** Logs at once which upstreams cannot be reached (taskgate serves anyway; /readyz says 503). */
  reportUnavailable(): void;
  /** Pids of the stdio server processes running now. */
  processes(): number[];
  /** Shutdown, before the HTTP server's connections close: inline calls get `graceMs`, listen streams end. */
  drain(graceMs: number): Promise<void>;
  /** Shutdown, after: upstream sessions, processes, legacy doors, file watchers. */
  close(): Promise<void>;
}
