// One upstream and everything taskgate keeps for it: the upstream side (link, pool, catalog,
// events, legacy door), the task side (records, runner, access, the call owner), its listen
// streams, its method router and its MCP endpoint (both doors). The single `upstream` is one of
// these at `path`; a fleet has one per backend at `<path>/<name>`, each with its own counts
// (metrics labelled with the backend) and log lines carrying `backend`. close() drains and closes
// them in order; the instance's shared parts (store, cluster, HTTP server) are not its to close.

import type { Logger } from "pino";
import type { UpstreamAccess } from "../access/upstreamAccess.js";
import type { UpstreamPolicy } from "../config/accessOptions.js";
import type { Config, UpstreamOptions } from "../config/schema.js";
import type { Dispatch } from "../methods/eraRouter.js";
import { createEraRouter } from "../methods/methodTable.js";
import { RelayedStates } from "../methods/relayedStates.js";
import { GatewayMetrics } from "../observability/metrics.js";
import { RelayedTaskFeed } from "../subscriptions/relayedTaskFeed.js";
import { Subscriptions } from "../subscriptions/subscriptions.js";
import { BackendTasks } from "../tasks/backendTasks.js";
import { RelayedTaskIds } from "../tasks/relayedTaskIds.js";
import type { TaskHolder } from "../tasks/taskAccess.js";
import type { AccessSide } from "./accessSide.js";
import type { ClusterSide } from "./clusterSide.js";
import type { Door, Doors } from "./frontSide.js";
import { openTaskSide, type TaskSide } from "./taskSide.js";
import { openUpstreamSide, type UpstreamSide } from "./upstreamSide.js";

export interface BackendPart {
  /** The backend's name in a fleet; undefined for the single upstream. */
  name: string | undefined;
  /** Its MCP endpoint's path. */
  path: string;
  upstream: UpstreamSide;
  tasks: TaskSide;
  subscriptions: Subscriptions;
  /** A modern backend's own tasks (HTTP backends). */
  backendTasks: BackendTasks | undefined;
  router: Dispatch;
  door: Door;
  metrics: GatewayMetrics;
  /** Its access rules and approvals (a reload updates them in place). */
  policy: UpstreamAccess;
  log: Logger;
  /** Stops new work: inline calls get `graceMs`, then listen streams get their closing result. */
  drain(graceMs: number): Promise<void>;
  /** Closes its upstream sessions, processes and legacy door (after drain). */
  close(): Promise<void>;
}

export type BackendPartOptions = Pick<Config, "mrtr" | "quotas" | "cache"> & {
  upstream: UpstreamOptions;
  /** The task settings of this upstream (a backend's own policies over the top-level ones). */
  tasks: Config["tasks"];
  /** How often followed tasks are checked for a dead holder (from store.leaseMs). */
  holderCheckMs: number;
  /** Who may see and call what here, and which calls need approval. */
  policy: UpstreamPolicy;
};

export interface BackendPartDeps {
  cluster: ClusterSide;
  access: AccessSide;
  doors: Doors;
  bindLegacySessions: boolean;
  instanceId: string;
  log: Logger;
  /** In a fleet: the backend's name and endpoint (records, scope, labels). */
  backend?: { name: string; endpoint: string } | undefined;
  /** The single upstream's path. */
  path: string;
  /** The metrics of the single upstream (the instance's own); a backend gets its own labelled one. */
  metrics?: GatewayMetrics;
  /** Where answers and cancels of tasks go (a fleet: whichever backend's runner holds the task). */
  holder?: TaskHolder;
  /** Wraps the router the endpoint uses (a fleet: names the backend in failures, refuses new work while draining). */
  guard?: (router: Dispatch) => Dispatch;
}

export function openBackendPart(options: BackendPartOptions, deps: BackendPartDeps): BackendPart {
  const { backend, cluster, instanceId } = deps;
  const log = backend ? deps.log.child({ backend: backend.name }) : deps.log;
  const metrics = deps.metrics ?? new GatewayMetrics(backend ? { backend: backend.name } : {});
  const upstream = openUpstreamSide(options.upstream, {
    log,
    metrics,
    ledger: backend ? cluster.ledger.scoped(backend.name) : cluster.ledger,
    bindLegacySessions: deps.bindLegacySessions,
    followTaskMs: options.tasks.ttlMs,
  });
  const headersFor = (owner: string) => upstream.credentials.headersFor(owner);
  const modernNow = () => (upstream.era.current?.era === "modern" ? upstream.modernLink : undefined);
  const upgraded = async (why: string) => (await upstream.era.recheck(why))?.era === "modern";
  const modern = upstream.modernLink ? { linkNow: modernNow, headersFor, upgraded } : undefined;
  const tasks = openTaskSide(options, { cluster, pool: upstream.pool, modern, instanceId, metrics, log, backend, holder: deps.holder });
  const backendTasks = upstream.modernLink
    ? new BackendTasks({ link: upstream.modernLink, ids: new RelayedTaskIds(options.mrtr.secret, backend?.name), headersFor })
    : undefined;
  const subscriptions = new Subscriptions({
    access: tasks.access,
    bus: cluster.cluster.bus,
    pool: upstream.pool,
    events: upstream.events,
    holderCheckMs: options.holderCheckMs,
    log,
    relayed: backendTasks ? new RelayedTaskFeed(backendTasks, log) : undefined,
    noUpstreamSessions: () => modernNow() !== undefined,
  });
  const policy = deps.access.forUpstream(options.policy, backend?.name);
  const parts = { upstream, desk: tasks.desk, access: tasks.access, subscriptions, cache: options.cache, policy };
  const router = createEraRouter(
    parts,
    upstream.modernLink && backendTasks
      ? { link: upstream.modernLink, tasks: backendTasks, states: new RelayedStates(options.mrtr.secret), headersFor }
      : undefined,
  );
  metrics.observeLive(liveSources(upstream, tasks, subscriptions));
  const path = backend?.endpoint ?? deps.path;
  const door = deps.doors.open({
    router: deps.guard ? deps.guard(router) : router,
    legacyDoor: upstream.legacyDoor,
    // A pass-through cannot hide tools or ask for approvals: with either, old clients are refused (-32022).
    legacyClosed: () => policy.policed,
    credentials: upstream.credentials,
    metrics,
    log,
    ...(backend ? { endpoint: backend.endpoint } : {}),
  });
  return {
    name: backend?.name,
    path,
    upstream,
    tasks,
    subscriptions,
    backendTasks,
    router,
    door,
    metrics,
    policy,
    log,
    async drain(graceMs) {
      await tasks.desk.shutdown(graceMs); // inline calls finish or end shutting_down; listeners see tasks fail…
      await subscriptions.close(); // …then each listen stream gets its closing result
    },
    close: () => upstream.close(),
  };
}

/** The options of one upstream's parts: the shared ones, its upstream block and task settings. */
export function backendOptions(
  config: Config,
  upstream: UpstreamOptions,
  tasks: Config["tasks"] = config.tasks,
  policy: UpstreamPolicy = { access: config.access, approvals: config.approvals },
) {
  return {
    policy,
    upstream,
    tasks,
    mrtr: config.mrtr,
    quotas: config.quotas,
    cache: config.cache,
    holderCheckMs: Math.max(1000, Math.floor(config.store.leaseMs / 3)),
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
    backendEra: () => upstream.era.current?.era,
  };
}
