// A fleet: several named backends behind one taskgate. Each backend is a BackendPart at
// `<path>/<name>` (its own upstream side, task side, listen streams, router and both doors; log
// lines carry `backend`, metrics are labelled with it), and the federated endpoint (when
// `federation` is set) shows them as one. Contract:
//
// - One backend's trouble stays its own: its failures name it (`backend 'x': …`, data.backend),
//   the others serve on; /readyz reports each backend (`backend:<name>`; one marked
//   `required: false` does not make the instance unready).
// - Answers and cancels reach whichever backend's runner holds the task (also a backend being
//   drained), so a task answers wherever it was created, and only there.
// - reload(next) applies a validated configuration (fleet/reload.ts decides when): added backends
//   open and serve at once; removed ones stop taking new work, their running tasks get
//   reload.drainMs, then fail with reason backend_removed; a changed backend is a removed one
//   plus an added one at the same path. Unchanged backends are not touched, except that new access
//   rules and approvals of theirs apply in place from the next request on.

import type { Logger } from "pino";
import { type BackendOptions, reloadSettings } from "../config/fleetOptions.js";
import type { Config } from "../config/schema.js";
import type { HealthOptions } from "../http/health.js";
import type { MetricsSource } from "../http/metricsEndpoint.js";
import type { MethodRequest } from "../methods/handler.js";
import { MethodRouter } from "../methods/router.js";
import { tasksHandlers } from "../methods/tasks.js";
import { GatewayMetrics, mergedMetrics } from "../observability/metrics.js";
import type { AccessSide } from "../parts/accessSide.js";
import { type BackendPart, backendOptions, openBackendPart } from "../parts/backendPart.js";
import type { ClusterSide } from "../parts/clusterSide.js";
import type { Endpoints } from "../parts/endpoints.js";
import type { Door, Doors } from "../parts/frontSide.js";
import { backendRemoved, ErrorCode, RpcError } from "../protocol/errors.js";
import { REASONS } from "../protocol/reasons.js";
import type { Reply } from "../protocol/reply.js";
import { RelayedTaskFeed } from "../subscriptions/relayedTaskFeed.js";
import { Subscriptions } from "../subscriptions/subscriptions.js";
import { UpstreamEvents } from "../subscriptions/upstreamEvents.js";
import { RelayedTaskIds } from "../tasks/relayedTaskIds.js";
import { holderOver, TaskAccess } from "../tasks/taskAccess.js";
import { TaskRecords } from "../tasks/taskRecords.js";
import { diffBackends, type FleetShape, restartRefusal } from "./configDiff.js";
import { Federation, type Member } from "./federation.js";
import { type Reloader, type ReloadResult, watchForReload } from "./reload.js";

export interface FleetShared {
  cluster: ClusterSide;
  access: AccessSide;
  doors: Doors;
  bindLegacySessions: boolean;
  instanceId: string;
  log: Logger;
  path: string;
}

/** The metrics label of the federated endpoint's own series (not a valid backend name: no clash). */
export const FEDERATION_LABEL = "(federation)";

/** Methods a backend being drained still serves: its tasks can be followed, answered and cancelled. */
const WHILE_DRAINING = new Set(["tasks/get", "tasks/update", "tasks/cancel", "subscriptions/listen"]);

interface Running {
  part: BackendPart;
  options: BackendOptions;
  draining: boolean;
}

interface FederationDoor {
  path: string;
  door: Door;
  subscriptions: Subscriptions;
}

export interface FleetOptions {
  configFile?: string | undefined;
  reloadConfig?: (() => Config) | undefined;
}

export async function openFleet(config: Config, shared: FleetShared, options: FleetOptions): Promise<Fleet> {
  return new Fleet(config, shared, options);
}

export class Fleet implements Endpoints {
  private readonly active = new Map<string, Running>();
  private readonly draining = new Set<Running>();
  /** The endpoints of removed backends: their tasks can still be read (and fail with backend_removed). */
  private readonly former = new Map<string, Door>();
  /** Answers and cancels go to the runner that holds the task, wherever it was created. */
  private readonly holder = holderOver((taskId) => this.runnerOf(taskId));
  private readonly federationMetrics = new GatewayMetrics({ backend: FEDERATION_LABEL });
  private readonly records: TaskRecords;
  private federation: FederationDoor | undefined;
  private readonly reloader: Reloader;
  readonly metrics: MetricsSource;
  readonly health: HealthOptions;

  constructor(
    private config: Config,
    private readonly shared: FleetShared,
    options: FleetOptions,
  ) {
    for (const [name, backend] of Object.entries(config.backends ?? {})) this.active.set(name, this.open(name, backend));
    this.records = new TaskRecords(shared.cluster.store, shared.cluster.cluster.bus, this.federationMetrics, shared.cluster.transitions);
    this.federation = this.openFederation();
    this.metrics = mergedMetrics(() => [...this.all().map((running) => running.part.metrics), this.federationMetrics]);
    this.health = this.healthOptions();
    this.reloader = watchForReload({
      file: options.configFile,
      watchFile: reloadSettings(config.reload).watchFile,
      read: options.reloadConfig,
      apply: (next) => this.apply(next),
      log: shared.log,
    });
  }

  doorAt(path: string): Door | undefined {
    if (this.federation && path === this.federation.path) return this.federation.door;
    const { path: base } = this.shared;
    if (!path.startsWith(`${base}/`)) return undefined;
    return this.active.get(path.slice(base.length + 1))?.part.door ?? this.former.get(path);
  }

  parts(): BackendPart[] {
    return this.all().map((running) => running.part);
  }

  describe(): Record<string, unknown> {
    return { backends: [...this.active.keys()], ...(this.federation ? { federation: this.federation.path } : {}) };
  }

  reportUnavailable(): void {
    for (const running of this.active.values()) running.part.upstream.reportUnavailable();
  }

  processes(): number[] {
    return this.all().flatMap((running) => running.part.upstream.processes?.pids() ?? []);
  }

  async drain(graceMs: number): Promise<void> {
    this.reloader.stop();
    await Promise.all(this.all().map((running) => running.part.drain(graceMs)));
    await this.federation?.subscriptions.close();
  }

  async close(): Promise<void> {
    await Promise.all(this.all().map((running) => running.part.close()));
  }

  /** Reads the configuration again and applies it (as SIGHUP does). */
  reload(): Promise<ReloadResult> {
    return this.reloader.reloadNow();
  }

  private all(): Running[] {
    return [...this.active.values(), ...this.draining];
  }

  private runnerOf(taskId: string) {
    return this.all().find((running) => running.part.tasks.runner.hosts(taskId))?.part.tasks.runner;
  }

  /** One backend's parts, at `<path>/<name>`, with its task policies over the top-level ones. */
  private open(name: string, backend: BackendOptions): Running {
    const { tasks: own, required: _required, access, approvals, ...upstream } = backend;
    const { config } = this;
    const tasks = {
      ...config.tasks,
      ...(own.policy !== undefined ? { policy: own.policy } : {}),
      ...(own.autoAfterMs !== undefined ? { autoAfterMs: own.autoAfterMs } : {}),
      tools: { ...config.tasks.tools, ...own.tools },
      inputKeys: { ...config.tasks.inputKeys, ...own.inputKeys },
    };
    const running = { options: backend, draining: false } as Running;
    running.part = openBackendPart(backendOptions(config, upstream, tasks, { access, approvals }), {
      ...this.shared,
      backend: { name, endpoint: `${this.shared.path}/${name}` },
      holder: this.holder,
      guard: (router) => ({ dispatch: (request) => guarded(name, router, request, () => running.draining) }),
    });
    return running;
  }

  /** The federated endpoint: its own access (scoped to its path), listen streams and counts. */
  private openFederation(): FederationDoor | undefined {
    const { config, shared, holder } = this;
    const settings = config.federation;
    if (!settings) return undefined;
    const path = settings.path ?? config.path;
    const log = shared.log.child({ backend: FEDERATION_LABEL });
    const { leases, link, bus } = shared.cluster.cluster;
    const access = new TaskAccess({
      records: this.records,
      runner: holder,
      instanceId: shared.instanceId,
      leases,
      link,
      log,
      endpoint: path,
    });
    const [first] = this.active.values();
    // Listen streams here follow tasks only (list changes come from the members' own streams), so this pool is never asked.
    const subscriptions = new Subscriptions({
      access,
      bus,
      pool: (first as Running).part.upstream.pool,
      events: new UpstreamEvents(),
      holderCheckMs: Math.max(1000, Math.floor(config.store.leaseMs / 3)),
      log,
      // A modern backend's own tasks are read on the backend their id names.
      relayed: new RelayedTaskFeed(
        {
          get: (owner, taskId) => {
            const tasks = this.active.get(RelayedTaskIds.backendOf(taskId) ?? "")?.part.backendTasks;
            return tasks ? tasks.get(owner, taskId) : Promise.reject(new Error("no such backend"));
          },
        },
        log,
      ),
    });
    const members = (): Member[] =>
      (settings.backends ?? Object.keys(config.backends ?? {}))
        .map((name) => [name, this.active.get(name)] as const)
        .filter((entry): entry is readonly [string, Running] => entry[1] !== undefined)
        .map(([name, running]) => ({ name, dispatch: (request) => guarded(name, running.part.router, request, () => running.draining) }));
    const federation = new Federation(
      { path, separator: settings.separator, listTimeoutMs: settings.listTimeoutMs, cache: config.cache },
      {
        members,
        access,
        subscriptions,
        log,
        onCollision: (kind) => this.federationMetrics.federationCollision(kind),
        onMissing: (backend) => this.active.get(backend)?.part.metrics.federationLeftOut(),
      },
    );
    const router = new MethodRouter(federation.handlers(), Federation.capabilities);
    // A federated call reaches a member with the caller's credentials, like a call on the member's own path.
    const credentials = {
      remember: (owner: string, subject: string, authorization: string | undefined) => {
        for (const running of this.active.values()) running.part.upstream.credentials.remember(owner, subject, authorization);
      },
    };
    // Old clients are served on every backend's own path (a member or not): a refused one is told which.
    const legacyElsewhere = () => [...this.active.keys()].map((name) => `${shared.path}/${name}`);
    const door = shared.doors.open({ router, credentials, metrics: this.federationMetrics, log, endpoint: path, legacyElsewhere });
    return { path, door, subscriptions };
  }

  /** /readyz: the store and each backend (`backend:<name>`); a backend with required: false does not decide readiness. */
  private healthOptions(): HealthOptions {
    const backends = () => [...this.active];
    return {
      checks: () => ({
        store: async () => void (await this.records.get("readiness-probe")),
        ...Object.fromEntries(backends().map(([name, running]) => [`backend:${name}`, () => running.part.upstream.answers()])),
      }),
      notRequired: () => new Set(backends().flatMap(([name, running]) => (running.options.required ? [] : [`backend:${name}`]))),
      stats: () => {
        const parts = this.parts();
        const sum = (count: (part: BackendPart) => number) => parts.reduce((total, part) => total + count(part), 0);
        return {
          backends: this.active.size,
          heldTasks: sum((part) => part.tasks.runner.count()),
          heldCalls: sum((part) => part.tasks.desk.held().parked),
          inlineCalls: sum((part) => part.tasks.desk.held().inline),
          listenStreams: sum((part) => part.subscriptions.openCount()) + (this.federation?.subscriptions.openCount() ?? 0),
          upstreamSessions: sum((part) => part.upstream.pool.sessionCount()),
        };
      },
      timeoutMs: Math.max(1_000, ...Object.values(this.config.backends ?? {}).map((backend) => backend.requestTimeoutMs)),
    };
  }

  /** Applies a validated configuration: added backends open, removed ones drain, changed ones are both. */
  private async apply(next: Config): Promise<ReloadResult> {
    const diff = diffBackends(this.config as unknown as FleetShape, next as unknown as FleetShape);
    if (diff.needsRestart.length > 0) {
      return { refused: restartRefusal(diff.needsRestart) };
    }
    this.config = next;
    for (const name of diff.policyChanged) {
      const running = this.active.get(name);
      const options = next.backends?.[name];
      if (!running || !options) continue;
      running.options = options;
      running.part.policy.update({ access: options.access, approvals: options.approvals });
    }
    const retired = [...diff.removed, ...diff.changed].flatMap((name) => {
      const running = this.active.get(name);
      this.active.delete(name);
      return running ? [running] : [];
    });
    const opened = [...diff.added, ...diff.changed];
    for (const name of opened) this.active.set(name, this.open(name, next.backends?.[name] as BackendOptions));
    // The configured order (the federated catalog follows it).
    const ordered = Object.keys(next.backends ?? {}).flatMap((name) => {
      const running = this.active.get(name);
      return running ? [[name, running] as const] : [];
    });
    this.active.clear();
    for (const [name, running] of ordered) this.active.set(name, running);
    if (diff.federationChanged || opened.length + retired.length > 0) {
      const previous = this.federation;
      this.federation = this.openFederation();
      // Listen streams on the previous federated endpoint end with their closing result; clients listen again.
      if (previous) void previous.subscriptions.close();
    }
    for (const running of retired) {
      this.former.set(running.part.path, running.part.door);
      void this.retire(running).catch((error: unknown) =>
        this.shared.log.error(
          { event: "backend.close_failed", backend: running.part.name, err: String(error) },
          "closing a backend failed",
        ),
      );
    }
    for (const name of opened) this.active.get(name)?.part.upstream.reportUnavailable();
    return { applied: diff };
  }

  /** What stays at a removed backend's path: its tasks can be read (tasks/*); anything else is backend_removed. */
  private formerDoor(name: string, path: string): Door {
    const { shared } = this;
    const { leases, link } = shared.cluster.cluster;
    const log = shared.log.child({ backend: name });
    const access = new TaskAccess({
      records: this.records,
      runner: this.holder,
      instanceId: shared.instanceId,
      leases,
      link,
      log,
      endpoint: path,
    });
    const router = new MethodRouter(tasksHandlers(access), async () => ({}));
    return shared.doors.open({
      router: { dispatch: (request) => guarded(name, router, request, () => true) },
      metrics: this.federationMetrics,
      log,
    });
  }

  /** A backend no longer configured (or replaced): new work refused, its tasks get drainMs, then fail; then closed. */
  private async retire(running: Running): Promise<void> {
    running.draining = true;
    this.draining.add(running);
    const { part } = running;
    const name = part.name as string;
    const { drainMs } = reloadSettings(this.config.reload);
    const deadline = Date.now() + drainMs;
    while (part.tasks.runner.count() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, DRAIN_CHECK_MS));
    const left = part.tasks.runner.count();
    const removed = backendRemoved(name);
    await part.tasks.runner.shutdown({ abortReason: `backend '${name}' removed`, message: removed.message, error: removed.toJSON() });
    if (left > 0)
      part.log.warn({ event: "backend.drained", failed: left, drainMs }, "backend removed: its tasks still running were failed");
    await part.drain(0);
    await part.close();
    this.former.set(part.path, this.formerDoor(name, part.path));
    this.draining.delete(running);
    part.log.info({ event: "backend.closed" }, "backend closed");
  }
}

/** How often a draining backend's running tasks are counted. */
const DRAIN_CHECK_MS = 100;

/** A backend's router as its endpoints use it: while draining only its tasks are served; its
 *  upstream failures name it (message and data.backend), so a caller knows which backend failed. */
async function guarded(
  backend: string,
  router: Pick<MethodRouter, "dispatch">,
  request: MethodRequest,
  isDraining: () => boolean,
): Promise<Reply> {
  if (isDraining() && !WHILE_DRAINING.has(request.method)) throw backendRemoved(backend, true);
  try {
    const reply = await router.dispatch(request);
    return reply.kind === "error" ? { kind: "error", error: namedFor(backend, reply.error) as RpcError } : reply;
  } catch (error) {
    throw namedFor(backend, error);
  }
}

function namedFor(backend: string, error: unknown): unknown {
  if (!(error instanceof RpcError) || error.code !== ErrorCode.InternalError) return error;
  const data = (error.data ?? {}) as Record<string, unknown>;
  const reason = data.reason;
  if (typeof reason !== "string" || !Object.hasOwn(REASONS, reason) || data.backend !== undefined) return error;
  return new RpcError(error.code, `backend '${backend}': ${error.message}`, { ...data, backend }, error.httpStatus);
}
