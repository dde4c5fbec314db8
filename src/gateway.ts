// Assembles one taskgate instance from a Config: the upstream pool, the task store and cluster
// seams, task life and access, the method handlers and router, the front door and pass-through,
// subscriptions/listen fed by the task bus and the upstream's notifications, on an HTTP server
// with the health endpoints and /metrics. Used by the CLI and by every e2e test. Each part gets
// only the options it uses.

import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import express from "express";
import type { Logger } from "pino";
import { createIdentityResolver } from "./auth/createIdentityResolver.js";
import { ownerHashOf } from "./auth/identity.js";
import {
  buildResourceMetadata,
  metadataUrlFor,
  resourceIdentifier,
  resourceMetadataOptions,
  resourceMetadataWarning,
  wellKnownMetadataPaths,
} from "./auth/resourceMetadata.js";
import { CallQuotas } from "./calls/callQuotas.js";
import { LiveInlineCalls } from "./calls/liveInlineCalls.js";
import { ParkedCalls } from "./calls/parkedCalls.js";
import { RemoteRounds } from "./calls/remoteRounds.js";
import { RequestStateCodec } from "./calls/requestStateCodec.js";
import { type Cluster, createCluster } from "./cluster/createCluster.js";
import { isTaskCommand } from "./cluster/holderLink.js";
import { openPostgresPool } from "./cluster/postgresConnection.js";
import { connectRedis, describeRedisUrl } from "./cluster/redisConnection.js";
import type { Config } from "./config/schema.js";
import { frontDoor } from "./http/frontDoor.js";
import { mountHealth } from "./http/health.js";
import { mountMetrics } from "./http/metricsEndpoint.js";
import { createPassThrough } from "./http/passThrough.js";
import { RequestRate } from "./http/requestRate.js";
import { createStdioBridge } from "./http/stdioBridge.js";
import { discoverResult } from "./methods/discover.js";
import type { MethodHandler, MethodRequest } from "./methods/handler.js";
import { listenHandler } from "./methods/listen.js";
import { readHandler } from "./methods/reads.js";
import { relayHandler } from "./methods/relay.js";
import { MethodRouter } from "./methods/router.js";
import { tasksHandlers } from "./methods/tasks.js";
import { toolCallHandler } from "./methods/toolCall.js";
import { createLogger } from "./observability/logger.js";
import { GatewayMetrics } from "./observability/metrics.js";
import { resultReply } from "./protocol/reply.js";
import { Subscriptions } from "./subscriptions/subscriptions.js";
import { UpstreamEvents } from "./subscriptions/upstreamEvents.js";
import { createTaskStore } from "./tasks/stores/createTaskStore.js";
import { keyvAdapterFor } from "./tasks/stores/keyvAdapter.js";
import { TaskAccess } from "./tasks/taskAccess.js";
import type { TaskRecord } from "./tasks/taskRecord.js";
import { TaskRecords } from "./tasks/taskRecords.js";
import { TaskRunner } from "./tasks/taskRunner.js";
import type { TaskStore } from "./tasks/taskStore.js";
import { FileSessionLedger } from "./upstream/fileSessionLedger.js";
import { RedisSessionLedger } from "./upstream/redisSessionLedger.js";
import { NoSessionLedger, type SessionLedger } from "./upstream/sessionLedger.js";
import { UpstreamCatalog } from "./upstream/upstreamCatalog.js";
import { UpstreamCredentials } from "./upstream/upstreamCredentials.js";
import { toClientError, UpstreamFailure } from "./upstream/upstreamFailure.js";
import { openUpstreamLink } from "./upstream/upstreamLink.js";
import { UpstreamPool } from "./upstream/upstreamPool.js";
import { withoutPassword } from "./util/safeUrl.js";

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

/** The identity whose upstream session answers readiness checks (owners are hashes: no clash). */
const READINESS_OWNER = "taskgate:readiness";

export async function startGateway(config: Config, options: { log?: Logger } = {}): Promise<Gateway> {
  const log = options.log ?? createLogger(config.log.level);
  const instanceId = randomUUID();
  const metrics = new GatewayMetrics();
  const onRedisError = (error: Error) => log.warn({ event: "redis.error", err: error.message || String(error) }, "redis trouble");
  const { store, cluster, ledger } = await openTaskState(config.store, instanceId, onRedisError, log);
  const upstreamEvents = new UpstreamEvents();
  const credentials = new UpstreamCredentials({
    headers: config.upstream.headers,
    forwardAuthorization: config.upstream.forwardAuthorization,
    ...(config.upstream.subjectHeader ? { subjectHeader: config.upstream.subjectHeader } : {}),
  });
  const link = openUpstreamLink(config.upstream, log, credentials, READINESS_OWNER);
  const pool = new UpstreamPool({
    connect: (owner, profileKey) => link.connect(owner, profileKey),
    sessionsPer: config.upstream.sessionsPer,
    log,
    clientInfo: { name: "taskgate", version: "0.1.0" },
    maxSessions: link.maxSessions,
    maxSessionsOption: link.maxSessionsOption,
    sessionsAre: link.sessionsAre,
    sessionIdleMs: config.upstream.sessionIdleMs,
    requestTimeoutMs: config.upstream.requestTimeoutMs,
    timeouts: {
      initializeTimeoutMs: config.upstream.initializeTimeoutMs,
      pingIntervalMs: config.upstream.pingIntervalMs,
      pingTimeoutMs: config.upstream.pingTimeoutMs,
    },
    onNotification: (owner, profileKey, notification) => {
      metrics.upstreamNotification(notification.method);
      upstreamEvents.feed(owner, profileKey, notification);
    },
    onSessionOpened: (owner, profileKey, sessionId) => {
      if (sessionId) ledger.add(sessionId);
      upstreamEvents.sessionOpened(owner, profileKey);
    },
    onSessionClosed: (_owner, _profileKey, sessionId) => {
      if (sessionId) ledger.remove(sessionId);
    },
    onFailure: (reason) => metrics.upstreamFailed(reason),
  });
  // A legacy-door session at the process bound may take the place of an idle pool session.
  if (link.processes) link.processes.makeRoom = () => pool.evictIdle();
  const catalog = new UpstreamCatalog(pool);
  upstreamEvents.onAnyListChanged((kind, profileKey) => {
    if (kind === "tools") catalog.invalidate(profileKey);
  });
  /** The upstream's capabilities as the caller's session sees them; failures named for the client. */
  const upstreamInfo = (request: MethodRequest) =>
    pool.info(ownerHashOf(request.identity)).catch((error: unknown) => {
      throw toClientError(error);
    });
  const records = new TaskRecords(store, cluster.bus, metrics);
  const quotas = new CallQuotas(config.quotas);
  // Every task started here (tools/call, a retry handing its call over, another instance's retry) counts toward quotas.maxRunningTasks.
  const runner = new TaskRunner({
    records,
    instanceId,
    settings: config.tasks,
    log,
    onStarted: (call, owner) => quotas.track(call, owner, "task"),
  });
  const access = new TaskAccess({ records, runner, instanceId, leases: cluster.leases, link: cluster.link, log });
  const parked = new ParkedCalls(new RequestStateCodec(config.mrtr.secret), config.mrtr.holdTimeoutMs, log, instanceId);
  const live = new LiveInlineCalls();
  const rounds = new RemoteRounds({ link: cluster.link, parked, live, runner, log });
  await cluster.leases.start();
  // Other instances' commands for the calls held here: tasks' answers and cancels, inline calls' retries.
  await cluster.link.serve((command) => (isTaskCommand(command) ? access.onCommand(command) : rounds.serve(command)));
  const orphans = await runner.failOrphans();
  if (orphans > 0) log.warn({ event: "tasks.recovered", failed: orphans }, "tasks left running by a previous process were failed");
  // Upstream sessions a crashed process left are closed, so the upstream stops their calls.
  void ledger
    .takeLeftovers((id) => cluster.leases.isAlive(id))
    .then(async (leftovers) => {
      if (leftovers.length === 0) return;
      const closed = await link.closeLeftovers(leftovers);
      log.warn(
        { event: "upstream.sessions.recovered", left: leftovers.length, closed },
        "closed the upstream sessions a previous process left",
      );
    })
    .catch((error: unknown) =>
      log.warn(
        { event: "upstream.ledger.failed", err: error instanceof Error ? error.message : String(error) },
        "could not read the sessions a previous process left",
      ),
    );

  const subscriptions = new Subscriptions({
    access,
    bus: cluster.bus,
    pool,
    events: upstreamEvents,
    holderCheckMs: Math.max(1000, Math.floor(config.store.leaseMs / 3)),
    log,
  });

  const relay = relayHandler(pool, config.cache);
  const read = readHandler(pool, parked, live, rounds, quotas, config.cache);
  const handlers: Record<string, MethodHandler> = {
    "server/discover": async (request) => resultReply(discoverResult(await upstreamInfo(request), config.cache)),
    "tools/list": relay,
    "prompts/list": relay,
    "prompts/get": read,
    "resources/list": relay,
    "resources/templates/list": relay,
    "resources/read": read,
    "completion/complete": relay,
    "tools/call": toolCallHandler({ pool, catalog, runner, parked, live, rounds, quotas, settings: config.tasks }),
    "subscriptions/listen": listenHandler(subscriptions),
    ...tasksHandlers(access),
  };
  const router = new MethodRouter(handlers, async (request) => (await upstreamInfo(request)).capabilities);
  const identity = createIdentityResolver(config.auth);
  if (identity.mode === "demo") {
    log.warn({ event: "auth.demo" }, "auth mode 'demo': the bearer token is taken as the user's name; never use this in production");
  }
  // One identity on every door: the legacy door checks bearer tokens like the modern one unless it
  // is left open on purpose (legacy.auth open) or the mode is demo (no real identities to check).
  const legacyAuthenticates = config.legacy.enabled && config.legacy.auth === "required" && identity.mode !== "demo";
  if (config.legacy.enabled && !legacyAuthenticates && identity.mode !== "demo") {
    log.warn({ event: "auth.legacy_open" }, "legacy.auth 'open': legacy (2025-11-25) clients reach the upstream without authenticating");
  }
  const passThrough = link.processes
    ? createStdioBridge({
        processes: link.processes,
        idleMs: config.upstream.sessionIdleMs,
        sendTimeoutMs: config.upstream.requestTimeoutMs,
        bindSessions: legacyAuthenticates,
        log,
      })
    : createPassThrough(link.url as string, log, { credentials, bindSessions: legacyAuthenticates });

  metrics.observeLive({
    tasksByStatus: () => runner.countByStatus(),
    upstreamCalls: () => pool.callCount(),
    parkedCalls: () => parked.count(),
    inlineCalls: () => live.count(),
    listenStreams: () => subscriptions.openCount(),
    listenFollows: () => subscriptions.follows(),
    upstreamResourceSubscriptions: () => subscriptions.upstreamSubscriptionCount(),
    upstreamSessions: () => pool.sessionCount(),
    upstreamProcesses: () => link.processes?.count ?? 0,
  });

  const app = express();
  app.disable("x-powered-by");
  mountHealth(app, {
    checks: {
      upstream: () => upstreamAnswers(pool.check(READINESS_OWNER), config.upstream.forwardAuthorization),
      store: async () => void (await records.get("readiness-probe")),
    },
    stats: () => ({
      heldTasks: runner.count(),
      heldCalls: parked.count(),
      inlineCalls: live.count(),
      listenStreams: subscriptions.openCount(),
      upstreamSessions: pool.sessionCount(),
    }),
    timeoutMs: config.upstream.requestTimeoutMs,
  });
  mountMetrics(app, metrics, log);
  // RFC 9728: where clients learn which authorization server issues tokens for this resource.
  const metadata = resourceMetadataOptions(config.auth);
  const metadataWarning = resourceMetadataWarning(metadata);
  if (metadataWarning) log.warn({ event: "auth.resource_metadata" }, metadataWarning);
  const resourceOf = (req: IncomingMessage) => resourceIdentifier(metadata!, `http://${req.headers.host ?? "localhost"}`, config.path);
  if (metadata) {
    for (const path of wellKnownMetadataPaths(config.path)) {
      app.get(path, (req, res) => {
        res.json(buildResourceMetadata(metadata, resourceOf(req)));
      });
    }
  }
  const door = frontDoor({
    identity,
    requiredScopes: config.auth.requiredScopes,
    ...(metadata ? { resourceMetadataUrl: (req: IncomingMessage) => metadataUrlFor(resourceOf(req)) } : {}),
    router,
    passThrough,
    legacy: {
      enabled: config.legacy.enabled,
      authenticate: legacyAuthenticates,
      ...(config.legacy.requiredScopes ? { requiredScopes: config.legacy.requiredScopes } : {}),
    },
    ...(config.quotas.requestsPerMinute !== undefined ? { rate: new RequestRate(config.quotas.requestsPerMinute) } : {}),
    onIdentified: (who, owner, authorization) => credentials.remember(owner, who.subject, authorization),
    log,
    allowedOrigins: config.allowedOrigins,
    allowedHosts: config.allowedHosts,
    bodyLimitBytes: config.bodyLimitBytes,
    keepAliveMs: config.subscriptions.keepAliveMs,
    metrics,
  });
  const server = createServer(
    {
      headersTimeout: config.http.headersTimeoutMs,
      requestTimeout: config.http.requestTimeoutMs,
      keepAliveTimeout: config.http.keepAliveTimeoutMs,
      // How often Node looks for clients past those limits (its default is 30 s).
      connectionsCheckingInterval: Math.min(1_000, config.http.headersTimeoutMs),
    },
    // The MCP endpoint, the hot path, skips express's router; express serves the rest.
    (req, res) => {
      if (isEndpoint(req.url, config.path)) door(req, res).catch((error: unknown) => failedRequest(log, res, error));
      else app(req, res);
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const url = `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}${config.path}`;
  log.info(
    { event: "gateway.started", url, upstream: link.target, store: config.store.kind, instanceId, auth: identity.mode },
    "taskgate listening",
  );
  // Say at once when the upstream cannot be reached (taskgate serves anyway; /readyz says 503).
  upstreamAnswers(pool.check(READINESS_OWNER), config.upstream.forwardAuthorization).catch((error: unknown) => {
    const failure = toClientError(error);
    log.warn(
      {
        event: "upstream.unavailable",
        upstream: link.target,
        reason: (failure.data as { reason?: string } | undefined)?.reason,
        err: failure.message,
      },
      "upstream does not answer yet; /readyz is 503 until it does",
    );
  });

  return {
    url,
    port,
    server,
    log,
    ...(link.processes ? { upstreamProcesses: () => link.processes?.pids() ?? [] } : {}),
    async close() {
      log.info(
        { event: "gateway.draining", inlineCalls: live.count(), heldTasks: runner.count(), graceMs: config.shutdown.graceMs },
        "draining: no new connections; inline calls get the grace period",
      );
      const closed = new Promise<void>((resolve) => server.close(() => resolve())); // no new connections
      server.closeIdleConnections();
      await live.drain(config.shutdown.graceMs); // inline calls finish, or end with a shutting_down error
      parked.abortAll("gateway shutting down");
      await runner.shutdown(); // listeners see their tasks fail…
      await subscriptions.close(); // …then each listen stream gets its closing result
      server.closeAllConnections();
      await closed;
      // Each part closes even when another could not (a Redis that is gone, an upstream that hangs).
      await closeQuietly(log, "upstream sessions", () => pool.close());
      await closeQuietly(log, "legacy door", () => passThrough.close());
      await closeQuietly(log, "upstream connections", () => link.close());
      await closeQuietly(log, "cluster", () => cluster.close()); // this instance's lease goes at once: others see its tasks are gone
      await closeQuietly(log, "session ledger", () => ledger.close());
      await closeQuietly(log, "task store", () => store.close());
    },
  };
}

/** The readiness check of the upstream. When the upstream checks the callers' own tokens
 *  (forwardAuthorization), taskgate has none to show it: a 401/403 then proves it answers. */
async function upstreamAnswers(check: Promise<void>, forwardsCallerTokens: boolean): Promise<void> {
  try {
    await check;
  } catch (error) {
    if (forwardsCallerTokens && error instanceof UpstreamFailure && error.reason === "upstream_auth") return;
    throw error;
  }
}

/** Runs one shutdown step; a failure is logged, and the next step still runs. */
async function closeQuietly(log: Logger, what: string, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (error) {
    log.warn(
      { event: "gateway.close.failed", what, err: error instanceof Error ? error.message : String(error) },
      `closing the ${what} failed`,
    );
  }
}

/** Whether a request URL (path and query) is the MCP endpoint. */
function isEndpoint(url: string | undefined, path: string): boolean {
  if (url === undefined || !url.startsWith(path)) return false;
  const next = url.charCodeAt(path.length);
  return Number.isNaN(next) || next === 63 /* ? */;
}

/** A request the front door could not answer (a bug): logged with its stack, answered 500. */
function failedRequest(log: Logger, res: ServerResponse, error: unknown): void {
  log.error({ event: "request.crashed", err: error }, "front door crashed");
  if (!res.headersSent)
    res
      .writeHead(500, { "Content-Type": "application/json" })
      .end('{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}');
  else res.destroy();
}

/** The task store and the cluster seams (bus, leases, holder link) for the configured store. */
async function openTaskState(
  options: Config["store"],
  instanceId: string,
  onError: (error: Error) => void,
  log: Logger,
): Promise<{ store: TaskStore; cluster: Cluster<TaskRecord>; ledger: SessionLedger }> {
  if (options.kind === "postgres") return openPostgresState(options, instanceId, onError);
  if (options.kind === "keyv") {
    const adapter = await keyvAdapterFor(options.uri ?? "");
    const label = withoutPassword(options.uri ?? "");
    const store = await createTaskStore({ kind: "keyv", adapter, label, commandTimeoutMs: options.commandTimeoutMs, onError });
    return { store, cluster: await createCluster<TaskRecord>({ kind: "local", instanceId }), ledger: new NoSessionLedger() };
  }
  if (options.kind !== "redis") {
    const store = await createTaskStore(
      options.kind === "file" ? { kind: "file", path: options.path, writeTimeoutMs: options.commandTimeoutMs } : { kind: "memory" },
    );
    const ledger = options.kind === "file" ? new FileSessionLedger(`${resolve(options.path)}.sessions`, log) : new NoSessionLedger();
    return { store, cluster: await createCluster<TaskRecord>({ kind: "local", instanceId }), ledger };
  }
  const store = await createTaskStore({
    kind: "redis",
    connect: () => connectRedis({ url: options.url, onError }),
    label: describeRedisUrl(options.url),
    prefix: options.prefix,
    instanceId,
    commandTimeoutMs: options.commandTimeoutMs,
  });
  try {
    const cluster = await createCluster<TaskRecord>({
      kind: "redis",
      url: options.url,
      prefix: options.prefix,
      leaseMs: options.leaseMs,
      instanceId,
      onError,
    });
    const ledger = await RedisSessionLedger.open({
      connect: () => connectRedis({ url: options.url, onError, commandTimeoutMs: options.commandTimeoutMs }),
      prefix: options.prefix,
      instanceId,
      log,
    }).catch(async (error: unknown) => {
      await cluster.close();
      throw error;
    });
    return { store, cluster, ledger };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/** PostgreSQL alone: the store and the cluster seams on one database (no session ledger there yet). */
async function openPostgresState(
  options: Config["store"],
  instanceId: string,
  onError: (error: Error) => void,
): Promise<{ store: TaskStore; cluster: Cluster<TaskRecord>; ledger: SessionLedger }> {
  const { url, commandTimeoutMs, leaseMs } = options;
  const store = await createTaskStore({
    kind: "postgres",
    connect: () => openPostgresPool({ url, commandTimeoutMs, onError }),
    instanceId,
    onError,
  });
  try {
    const cluster = await createCluster<TaskRecord>({ kind: "postgres", url, leaseMs, instanceId, commandTimeoutMs, onError });
    return { store, cluster, ledger: new NoSessionLedger() };
  } catch (error) {
    await store.close();
    throw error;
  }
}
