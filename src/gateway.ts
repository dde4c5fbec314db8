// Assembles one taskgate instance from a Config, as a short list of parts, each built by its own
// factory from only the options it uses (src/parts/): the cluster side (task store, cluster seams,
// session ledger), the callers (identity), the upstream side (link, pool, catalog, events, legacy
// door), the task side (records, runner, access, the call owner), listen streams, the method
// router, and the front side (the MCP endpoint and the side doors on one HTTP server). Used by the
// CLI and by every e2e test. close() drains and closes them in order.

import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { Logger } from "pino";
import { tracedHolderLink } from "./cluster/tracedHolderLink.js";
import type { Config } from "./config/schema.js";
import { createMethodRouter } from "./methods/methodTable.js";
import { createLogger } from "./observability/logger.js";
import { GatewayMetrics } from "./observability/metrics.js";
import { tracingOn } from "./observability/tracing.js";
import { startTracing } from "./observability/tracingSetup.js";
import { closeQuietly } from "./parts/closeQuietly.js";
import { openClusterSide } from "./parts/clusterSide.js";
import { listenHttp, openCallers, openFrontSide } from "./parts/frontSide.js";
import { openTaskSide, type TaskSide } from "./parts/taskSide.js";
import { openUpstreamSide, type UpstreamSide } from "./parts/upstreamSide.js";
import { Subscriptions } from "./subscriptions/subscriptions.js";

export interface Gateway {
  /** http://host:port/path of the MCP endpoint. */
  url: string;
  port: number;
  server: Server;
  log: Logger;
  /** Pids of the upstream server processes running now (upstream.command only). */
  upstreamProcesses?: () => number[];
  close(): Promise<void>;
}

const VERSION = "0.1.0";

export async function startGateway(config: Config, options: { log?: Logger } = {}): Promise<Gateway> {
  const log = options.log ?? createLogger(config.log.level);
  const instanceId = randomUUID();
  const metrics = new GatewayMetrics();
  const tracing = await startTracing(config.tracing, log, VERSION);
  const cluster = await openClusterSide(config.store, { instanceId, log });
  // While tracing is on, each hop to another instance is a span and carries its trace context.
  if (tracingOn()) cluster.cluster.link = tracedHolderLink(cluster.cluster.link);
  const callers = openCallers(config, log);
  const upstream = openUpstreamSide(config.upstream, {
    log,
    metrics,
    ledger: cluster.ledger,
    bindLegacySessions: callers.legacyAuthenticates,
  });
  const tasks = await openTaskSide(config, { cluster, pool: upstream.pool, instanceId, metrics, log });
  upstream.closeLeftovers((id) => cluster.cluster.leases.isAlive(id));
  const subscriptions = new Subscriptions({
    access: tasks.access,
    bus: cluster.cluster.bus,
    pool: upstream.pool,
    events: upstream.events,
    holderCheckMs: Math.max(1000, Math.floor(config.store.leaseMs / 3)),
    log,
  });
  const router = createMethodRouter({ upstream, desk: tasks.desk, access: tasks.access, subscriptions, cache: config.cache });
  metrics.observeLive(liveSources(upstream, tasks, subscriptions));
  const front = openFrontSide(
    { ...config, requestsPerMinute: config.quotas.requestsPerMinute, keepAliveMs: config.subscriptions.keepAliveMs },
    {
      callers,
      router,
      legacyDoor: upstream.legacyDoor,
      credentials: upstream.credentials,
      metrics,
      health: healthOf(upstream, tasks, subscriptions, config.upstream.requestTimeoutMs),
      log,
    },
  );
  const { server, port, url } = await listenHttp(config, front);
  log.info(
    { event: "gateway.started", url, upstream: upstream.target, store: config.store.kind, instanceId, auth: callers.resolver.mode },
    "taskgate listening",
  );
  upstream.reportUnavailable();

  const { processes } = upstream;
  return {
    url,
    port,
    server,
    log,
    ...(processes ? { upstreamProcesses: () => processes.pids() } : {}),
    async close() {
      log.info(
        {
          event: "gateway.draining",
          inlineCalls: tasks.desk.held().inline,
          heldTasks: tasks.runner.count(),
          graceMs: config.shutdown.graceMs,
        },
        "draining: no new connections; inline calls get the grace period",
      );
      const closed = new Promise<void>((resolve) => server.close(() => resolve())); // no new connections
      server.closeIdleConnections();
      await tasks.desk.shutdown(config.shutdown.graceMs); // inline calls finish or end shutting_down; listeners see tasks fail…
      await subscriptions.close(); // …then each listen stream gets its closing result
      server.closeAllConnections();
      await closed;
      await upstream.close();
      await cluster.close();
      await closeQuietly(log, "tracing", () => tracing.shutdown()); // the last spans are flushed
    },
  };
}

/** What is held right now, read by /metrics at scrape time. */
function liveSources(upstream: UpstreamSide, tasks: TaskSide, subscriptions: Subscriptions) {
  return {
    tasksByStatus: () => tasks.runner.countByStatus(),
    upstreamCalls: () => upstream.pool.callCount(),
    parkedCalls: () => tasks.desk.held().parked,
    inlineCalls: () => tasks.desk.held().inline,
    listenStreams: () => subscriptions.openCount(),
    listenFollows: () => subscriptions.follows(),
    upstreamResourceSubscriptions: () => subscriptions.upstreamSubscriptionCount(),
    upstreamSessions: () => upstream.pool.sessionCount(),
    upstreamProcesses: () => upstream.processes?.count ?? 0,
  };
}

/** /readyz checks (the upstream answers, the store reads) and /healthz counts. */
function healthOf(upstream: UpstreamSide, tasks: TaskSide, subscriptions: Subscriptions, timeoutMs: number) {
  return {
    checks: {
      upstream: () => upstream.answers(),
      store: async () => void (await tasks.records.get("readiness-probe")),
    },
    stats: () => ({
      heldTasks: tasks.runner.count(),
      heldCalls: tasks.desk.held().parked,
      inlineCalls: tasks.desk.held().inline,
      listenStreams: subscriptions.openCount(),
      upstreamSessions: upstream.pool.sessionCount(),
    }),
    timeoutMs,
  };
}
