// Assembles one taskgate instance from a Config: upstream pool, task store and manager, method
// router, front door and pass-through, subscriptions/listen fed by the task bus and the upstream's
// notifications, on an HTTP server. Used by the CLI and by every e2e test.

import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import type { Logger } from "pino";
import { createIdentityResolver } from "./auth/createIdentityResolver.js";
import { toolCallHandler } from "./calls/toolCall.js";
import type { Config } from "./config/schema.js";
import { frontDoor } from "./http/frontDoor.js";
import { createPassThrough } from "./http/passThrough.js";
import type { MethodHandler } from "./methods/context.js";
import { discoverResult } from "./methods/discover.js";
import { relayHandler } from "./methods/relay.js";
import { resumableRelayHandler } from "./methods/resumableRelay.js";
import { HeldCalls } from "./calls/heldCalls.js";
import { RequestStateCodec } from "./calls/requestStateCodec.js";
import { MethodRouter } from "./methods/router.js";
import { tasksHandlers } from "./methods/tasks.js";
import { createLogger } from "./observability/logger.js";
import { Subscriptions } from "./subscriptions/subscriptions.js";
import { UpstreamEvents } from "./subscriptions/upstreamEvents.js";
import { createTaskStore } from "./tasks/stores/createTaskStore.js";
import { createCluster, type Cluster } from "./cluster/createCluster.js";
import { TaskManager } from "./tasks/taskManager.js";
import type { TaskStore } from "./tasks/taskStore.js";
import { UpstreamCatalog } from "./upstream/upstreamCatalog.js";
import { UpstreamPool } from "./upstream/upstreamPool.js";

export interface Gateway {
  /** http://host:port/path of the MCP endpoint. */
  url: string;
  port: number;
  server: Server;
  pool: UpstreamPool;
  tasks: TaskManager;
  store: TaskStore;
  /** Open subscriptions/listen streams, their task listeners and upstream resource holds. */
  subscriptions: Subscriptions;
  /** Notifications from the upstream's sessions (list changes, resource updates). */
  upstreamEvents: UpstreamEvents;
  log: Logger;
  close(): Promise<void>;
}

export async function startGateway(config: Config, options: { log?: Logger } = {}): Promise<Gateway> {
  const log = options.log ?? createLogger(config.log.level);
  const instanceId = randomUUID();
  const upstreamEvents = new UpstreamEvents();
  const pool = new UpstreamPool({
    url: config.upstream.url,
    log,
    onNotification: (notification) => upstreamEvents.feed(notification),
    onSessionOpened: (profileKey) => upstreamEvents.sessionOpened(profileKey),
  });
  const catalog = new UpstreamCatalog(pool);
  upstreamEvents.onAnyListChanged((kind) => {
    if (kind === "tools") catalog.invalidate();
  });
  const onRedisError = (error: Error) => log.warn({ event: "redis.error", err: error.message || String(error) }, "redis trouble");
  const { store, cluster } = await openTaskState(config.store, instanceId, onRedisError);
  const bus = cluster.bus;
  const tasks = new TaskManager(store, bus, config.tasks, instanceId, log, cluster);
  await cluster.leases.start();
  await tasks.serveHolderCommands();
  const orphans = await tasks.failOrphans();
  if (orphans > 0) log.warn({ event: "tasks.recovered", failed: orphans }, "tasks left running by a previous process were failed");

  const subscriptions = new Subscriptions({
    tasks,
    bus,
    pool,
    events: upstreamEvents,
    keepAliveMs: config.subscriptions.keepAliveMs,
    holderCheckMs: Math.max(1000, Math.floor(config.store.leaseMs / 3)),
    log,
  });

  const relay = relayHandler(pool, config.cache);
  const heldCalls = new HeldCalls(new RequestStateCodec(config.mrtr.secret), config.mrtr.holdTimeoutMs, log);
  const resumable = resumableRelayHandler(pool, heldCalls, config.cache);
  const handlers: Record<string, MethodHandler> = {
    "server/discover": async () => discoverResult(await pool.info(), config.cache),
    "tools/list": relay,
    "prompts/list": relay,
    "prompts/get": resumable,
    "resources/list": relay,
    "resources/templates/list": relay,
    "resources/read": resumable,
    "completion/complete": relay,
    "tools/call": toolCallHandler({ pool, catalog, tasks, heldCalls, config }),
    "subscriptions/listen": subscriptions.handler,
    ...tasksHandlers(tasks),
  };
  const router = new MethodRouter(handlers, async () => (await pool.info()).capabilities);
  const passThrough = createPassThrough(config.upstream.url, log);
  const identity = createIdentityResolver(config.auth);
  if (identity.mode === "demo") {
    log.warn({ event: "auth.demo" }, "auth mode 'demo': the bearer token is taken as the user's name; never use this in production");
  }

  const app = express();
  app.disable("x-powered-by");
  app.get("/healthz", (_req, res) => {
    res.json({
      status: "ok",
      heldTasks: tasks.heldCount(),
      heldCalls: heldCalls.count(),
      listenStreams: subscriptions.openCount(),
      upstreamSessions: pool.sessionCount(),
    });
  });
  const door = frontDoor({ config, identity, router, passThrough, log });
  app.all(config.path, (req, res, next) => {
    door(req, res).catch(next);
  });

  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const url = `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}${config.path}`;
  log.info({ event: "gateway.started", url, upstream: config.upstream.url, store: config.store.kind, instanceId, auth: identity.mode }, "taskgate listening");

  return {
    url,
    port,
    server,
    pool,
    tasks,
    store,
    subscriptions,
    upstreamEvents,
    log,
    async close() {
      heldCalls.abortAll("gateway shutting down");
      await tasks.shutdown(); // listeners see their tasks fail…
      await subscriptions.close(); // …then each listen stream gets its closing result
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.close();
      await cluster.close(); // this instance's lease goes at once: others see its tasks are gone
      await store.close();
    },
  };
}

/** The task store and the cluster seams (bus, leases, holder link) for the configured store. */
async function openTaskState(
  options: Config["store"],
  instanceId: string,
  onError: (error: Error) => void,
): Promise<{ store: TaskStore; cluster: Cluster }> {
  if (options.kind !== "redis") {
    const store = await createTaskStore(options.kind === "file" ? { kind: "file", path: options.path } : { kind: "memory" });
    return { store, cluster: await createCluster({ kind: "local", instanceId }) };
  }
  const store = await createTaskStore({ kind: "redis", url: options.url, prefix: options.prefix, instanceId, onError });
  try {
    const cluster = await createCluster({ kind: "redis", url: options.url, prefix: options.prefix, leaseMs: options.leaseMs, instanceId, onError });
    return { store, cluster };
  } catch (error) {
    await store.close();
    throw error;
  }
}
