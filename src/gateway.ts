// Assembles one taskgate instance from a Config, as a short list of parts, each built by its own
// factory from only the options it uses (src/parts/): the cluster side (task store, cluster seams,
// session ledger), the callers (identity) and their doors, the endpoints — the single upstream
// (one BackendPart at `path`), or a fleet of backends with its federated endpoint (src/fleet/) —
// and the front side (the MCP endpoints and the side doors on one HTTP server). Used by the CLI
// and by every e2e test. close() drains and closes them in order.

import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { Logger } from "pino";
import { inRole } from "./access/approvals.js";
import { tracedHolderLink } from "./cluster/tracedHolderLink.js";
import { reloadSettings } from "./config/fleetOptions.js";
import type { Config } from "./config/schema.js";
import { type FleetShape, policyDiff, restartRefusal } from "./fleet/configDiff.js";
import { openFleet } from "./fleet/fleet.js";
import { type ReloadResult, watchForReload } from "./fleet/reload.js";
import { mountApprovals } from "./http/approvalsRoutes.js";
import { pushRoutes } from "./inventory/pushRoutes.js";
import { Notifier } from "./notify/notifier.js";
import { createLogger } from "./observability/logger.js";
import { GatewayMetrics } from "./observability/metrics.js";
import { tracingOn } from "./observability/tracing.js";
import { startTracing } from "./observability/tracingSetup.js";
import { openAccessSide } from "./parts/accessSide.js";
import { type BackendPart, backendOptions, openBackendPart } from "./parts/backendPart.js";
import { closeQuietly } from "./parts/closeQuietly.js";
import { openClusterSide } from "./parts/clusterSide.js";
import type { Endpoints } from "./parts/endpoints.js";
import { consoleSiteOf, listenHttp, openCallers, openDoors, openFrontSide } from "./parts/frontSide.js";
import { openInventorySide } from "./parts/inventorySide.js";
import { serveTaskCommands } from "./parts/taskSide.js";
import { tuneHeapForRequests } from "./util/heapTuning.js";

export interface Gateway {
  /** http://host:port/path of the MCP endpoint (a fleet's: of its federated endpoint, else the base path). */
  url: string;
  port: number;
  server: Server;
  log: Logger;
  /** Pids of the upstream server processes running now (upstream.command, or a fleet's command backends). */
  upstreamProcesses?: () => number[];
  /** Resolves once no notification is queued, waiting for a retry or being sent (tests: "nothing else was sent"). */
  notificationsSettled(): Promise<void>;
  /** Applies the configuration file again (as SIGHUP does); resolves with what it did (a fleet, or a single upstream with a file). */
  reload?: () => Promise<unknown>;
  close(): Promise<void>;
}

const VERSION = "0.1.0";

export interface GatewayOptions {
  log?: Logger;
  /** The configuration file taskgate reloads (on change and on SIGHUP): a fleet's backends, a single upstream's access and approvals. */
  configFile?: string;
  /** How taskgate reads its configuration again (loadConfig with the same sources). */
  reloadConfig?: () => Config;
}

export async function startGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  tuneHeapForRequests(); // before the first request: no per-request literal is ever judged long-lived
  const log = options.log ?? createLogger(config.log.level);
  const instanceId = randomUUID();
  const tracing = await startTracing(config.tracing, log, VERSION);
  const cluster = await openClusterSide(config.store, { instanceId, log });
  // While tracing is on, each hop to another instance is a span and carries its trace context.
  if (tracingOn()) cluster.cluster.link = tracedHolderLink(cluster.cluster.link);
  let ownUrl = "http://127.0.0.1";
  const notifier = new Notifier(config.notify, cluster.store.push, () => config.inventory.publicUrl ?? ownUrl, log, inRole);
  cluster.transitions.push(notifier.transition);
  const callers = await openCallers(config, log);
  const doors = openDoors(
    { ...config, requestsPerMinute: config.quotas.requestsPerMinute, keepAliveMs: config.subscriptions.keepAliveMs },
    callers,
    log,
  );
  const access = openAccessSide(config, cluster, log);
  const shared = { cluster, access, doors, bindLegacySessions: callers.legacyAuthenticates, instanceId, log, path: config.path };
  const endpoints: Endpoints & { reload?: () => Promise<unknown> } =
    config.upstream === undefined
      ? await openFleet(config, shared, options)
      : singleEndpoint(openBackendPart(backendOptions(config, config.upstream), { ...shared, metrics: new GatewayMetrics() }), config, {
          ...options,
          log,
        });
  await serveTaskCommands(cluster, () => endpoints.parts().map((part) => part.tasks), log);
  const recoverLeftovers = () => {
    for (const part of endpoints.parts()) part.upstream.closeLeftovers((id) => cluster.cluster.leases.isAlive(id));
  };
  recoverLeftovers();
  // An instance that dies later (or a predecessor killed less than a lease ago, which still looks
  // alive now) leaves sessions no start will see: the living look again every lease.
  const recoverAgain = setInterval(recoverLeftovers, config.store.leaseMs);
  recoverAgain.unref();
  const parts = () => endpoints.parts();
  const inventory = openInventorySide(config, { cluster, callers, parts, instanceId, log, more: pushRoutes(notifier), rate: doors.rate });
  const front = openFrontSide({
    doors,
    endpointAt: (path) => endpoints.doorAt(path),
    metrics: {
      contentType: endpoints.metrics.contentType,
      text: async () => `${await endpoints.metrics.text()}\n${await notifier.metrics.registry.metrics()}`,
    },
    health: endpoints.health,
    log,
    console: consoleSiteOf(config),
    mount: (app) => {
      mountApprovals(app, {
        approvals: access.approvals,
        resolver: callers.resolver,
        requiredScopes: config.auth.requiredScopes,
        shown: access.shown,
        rate: doors.rate,
        log,
      });
      endpoints.mount?.(app);
      inventory.mount(app);
    },
  });
  const { server, port, url } = await listenHttp(config, front).then((listening) => ({ ...listening, url: mcpUrl(config, listening.url) }));
  ownUrl = new URL(url).origin;
  log.info(
    { event: "gateway.started", url, ...endpoints.describe(), store: config.store.kind, instanceId, auth: callers.resolver.mode },
    "taskgate listening",
  );
  endpoints.reportUnavailable();

  const processes = endpoints.parts().some((part) => part.upstream.processes !== undefined);
  return {
    url,
    port,
    server,
    log,
    notificationsSettled: () => notifier.settled(),
    ...(processes || config.upstream === undefined ? { upstreamProcesses: () => endpoints.processes() } : {}),
    ...(endpoints.reload ? { reload: () => endpoints.reload?.() ?? Promise.resolve() } : {}),
    async close() {
      clearInterval(recoverAgain);
      const held = endpoints.parts().reduce((sum, part) => sum + part.tasks.runner.count(), 0);
      const inline = endpoints.parts().reduce((sum, part) => sum + part.tasks.desk.held().inline, 0);
      log.info(
        { event: "gateway.draining", inlineCalls: inline, heldTasks: held, graceMs: config.shutdown.graceMs },
        "draining: no new connections; inline calls get the grace period",
      );
      const closed = new Promise<void>((resolve) => server.close(() => resolve())); // no new connections
      server.closeIdleConnections();
      await endpoints.drain(config.shutdown.graceMs);
      server.closeAllConnections();
      await closed;
      await endpoints.close();
      inventory.close();
      // The tasks the shutdown failed are told so (before the store closes: pushes read it).
      await notifier.flush(config.notify.timeoutMs);
      notifier.close();
      await cluster.close();
      await closeQuietly(log, "tracing", () => tracing.shutdown()); // the last spans are flushed
    },
  };
}

/** The MCP URL to name: a fleet's federated endpoint (without one: the path its backends are under). */
function mcpUrl(config: Config, listening: string): string {
  return config.upstream === undefined ? `${new URL(listening).origin}${config.federation?.path ?? config.path}` : listening;
}

/** The single upstream at `path`: one part, its metrics the instance's, /readyz its upstream and the
 *  store. With a configuration file it reloads (on change and on SIGHUP) its access rules and
 *  approvals, in place; a change to anything else is refused (it needs a restart). */
function singleEndpoint(
  part: BackendPart,
  config: Config,
  options: GatewayOptions & { log: Logger },
): Endpoints & { reload: () => Promise<ReloadResult> } {
  const { upstream, tasks, subscriptions } = part;
  let running = config;
  const reloader = watchForReload({
    file: options.configFile,
    watchFile: reloadSettings(config.reload).watchFile,
    read: options.reloadConfig,
    async apply(next) {
      const diff = policyDiff(running as unknown as FleetShape, next as unknown as FleetShape);
      if (diff.needsRestart.length > 0) {
        return { refused: restartRefusal(diff.needsRestart, "a single upstream reloads access and approvals") };
      }
      running = next;
      if (diff.policyChanged.length > 0) part.policy.update({ access: next.access, approvals: next.approvals });
      return { applied: diff };
    },
    log: options.log,
  });
  return {
    reload: () => reloader.reloadNow(),
    doorAt: (path) => (path === config.path ? part.door : undefined),
    parts: () => [part],
    metrics: part.metrics,
    health: {
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
      timeoutMs: config.upstream?.requestTimeoutMs ?? 30_000,
    },
    describe: () => ({ upstream: upstream.target }),
    reportUnavailable: () => upstream.reportUnavailable(),
    processes: () => upstream.processes?.pids() ?? [],
    drain: (graceMs) => {
      reloader.stop();
      return part.drain(graceMs);
    },
    close: () => part.close(),
  };
}
