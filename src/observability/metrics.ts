// GatewayMetrics: what one taskgate instance counts and measures, in Prometheus text format
// (prom-client). Each instance has its own registry, so several gateways in one process never
// share a series; the Node process metrics (CPU, memory, event loop, GC), which belong to the
// process, live in one registry per process and are merged into every instance's answer.
// Contract: every label value comes from a small fixed set (a method taskgate knows, an outcome, a
// status, a failure reason, a store operation), never from an identity, a token, a task id or
// anything else a caller chooses, so /metrics reveals no one and its series cannot grow without
// bound. What is held right now (tasks, calls, streams, sessions) is read from the parts that hold
// it when /metrics is scraped, not counted up and down alongside them.

import { AggregatorRegistry, Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { ALL_REASONS, type Reason, type RequestOutcome, UPSTREAM_REASONS, type UpstreamReason } from "../protocol/reasons.js";

const PREFIX = "taskgate_";

/** How often the event loop's delay is sampled. Each sample is a timer that wakes the process: at prom-client's
 *  default 10 ms an idle taskgate spent about 0.6 % of a core, 100 wake-ups a second; at 100 ms about 0.2 %.
 *  Fewer samples do not make stalls rarer in them (a sample falls in a stall in proportion to its length either way);
 *  a stall of 100 ms or more always has one. */
const LOOP_DELAY_SAMPLE_MS = 100;

/** What is held right now, read from its source at each scrape. */
export interface LiveSources {
  /** This instance's live tasks (it hosts their upstream call), by status. */
  tasksByStatus(): { working: number; input_required: number };
  /** Upstream calls (tools/call, prompts/get, resources/read) running now. */
  upstreamCalls(): number;
  /** Inline calls parked between MRTR rounds. */
  parkedCalls(): number;
  /** Inline calls answering a client right now. */
  inlineCalls(): number;
  listenStreams(): number;
  /** What the open listen streams follow: tasks, list kinds, resource uris. */
  listenFollows(): { task: number; list: number; resource: number };
  /** Resource subscriptions taskgate holds upstream. */
  upstreamResourceSubscriptions(): number;
  upstreamSessions(): number;
  /** stdio server processes running (upstream.command; 0 with an HTTP upstream). */
  upstreamProcesses(): number;
  /** The protocol the backend speaks, as last found (undefined: not known yet). */
  backendEra?(): "legacy" | "modern" | undefined;
}

/** Seconds: a tasks/get on loopback takes about a millisecond, an inline tool call may take a minute. */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const STORE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

const STORE_OPERATIONS = ["create", "get", "update", "list_unfinished"];
const FINISHED_STATUSES = ["completed", "failed", "cancelled"];
/** Notifications counted by name; anything else an upstream sends is "other". */
const NOTIFICATIONS = new Set([
  "notifications/tools/list_changed",
  "notifications/prompts/list_changed",
  "notifications/resources/list_changed",
  "notifications/resources/updated",
]);

interface RequestSeries {
  count: Counter.Internal;
  duration: Histogram.Internal<"method" | "outcome">;
}

/** The outcomes of an upstream session's liveness ping (upstream/upstreamSession.ts), the pings counter's labels. */
export const PING_OUTCOMES = ["answered", "late", "stalled", "missed"] as const;
export type PingOutcome = (typeof PING_OUTCOMES)[number];

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"method" | "outcome">;
  private readonly requestDuration: Histogram<"method" | "outcome">;
  /** Per method, per outcome: the bound series, so a request allocates no label object. */
  private readonly requestSeries = new Map<string, Map<string, RequestSeries>>();
  private readonly tasksCreated: Counter;
  private readonly tasksFinished: Counter<"status">;
  private readonly upstreamErrors: Counter<"reason">;
  private readonly errorReplies: Counter<"reason">;
  private readonly upstreamNotifications: Counter<"method">;
  private readonly upstreamCancels: Counter<"outcome">;
  private readonly upstreamPings: Counter<"outcome">;
  private readonly federationCollisions: Counter<"kind">;
  private readonly federationMissing: Counter;
  private readonly storeErrors: Counter<"operation">;
  private readonly storeDuration: Histogram<"operation">;
  /** Per store operation: its bound series (a tasks/get does one store read). */
  private readonly storeSeries = new Map<string, { duration: Histogram.Internal<"operation">; errors: Counter.Internal }>();

  /** `backend`: in a fleet, the backend every series of this registry is labelled with. */
  constructor(labels: { backend?: string } = {}) {
    if (labels.backend !== undefined) this.registry.setDefaultLabels({ backend: labels.backend });
    processRegistry(); // process CPU and memory counted from start, not from the first scrape
    const registers = [this.registry];
    this.requests = new Counter({
      name: `${PREFIX}requests_total`,
      help:
        "Requests to the MCP endpoint, by JSON-RPC method (none: refused before one was read; notification; " +
        "legacy: the pass-through) and outcome",
      labelNames: ["method", "outcome"],
      registers,
    });
    this.requestDuration = new Histogram({
      name: `${PREFIX}request_duration_seconds`,
      help: "Time from a request's arrival until its response ended (for SSE replies, until the stream ended), by method and outcome",
      labelNames: ["method", "outcome"],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.tasksCreated = new Counter({ name: `${PREFIX}tasks_created_total`, help: "Tasks created by this instance", registers });
    this.tasksFinished = new Counter({
      name: `${PREFIX}tasks_finished_total`,
      help: "Tasks this instance moved to a terminal status, by that status",
      labelNames: ["status"],
      registers,
    });
    this.upstreamErrors = new Counter({
      name: `${PREFIX}upstream_errors_total`,
      help: "Upstream requests and session openings that failed, by reason (error.data.reason of the client's error)",
      labelNames: ["reason"],
      registers,
    });
    this.upstreamCancels = new Counter({
      name: `${PREFIX}upstream_cancels_total`,
      help:
        "notifications/cancelled sent upstream, by outcome: delivered, retried (an attempt failed, another followed), " +
        "undelivered (given up after upstream.cancelAttempts; for a call, its session was ended)",
      labelNames: ["outcome"],
      registers,
    });
    this.upstreamPings = new Counter({
      name: `${PREFIX}upstream_pings_total`,
      help:
        "Liveness pings of upstream sessions with calls in flight, by outcome: answered (in time), late (unanswered within " +
        "upstream.pingTimeoutMs while the upstream still sent other messages: the session was kept), stalled (not judged: " +
        "taskgate itself stalled while the ping was out; the session was kept), missed (the session was ended)",
      labelNames: ["outcome"],
      registers,
    });
    this.upstreamNotifications = new Counter({
      name: `${PREFIX}upstream_notifications_total`,
      help: "Notifications the upstream sent outside any call (all sessions, before merging copies), by method",
      labelNames: ["method"],
      registers,
    });
    this.storeErrors = new Counter({
      name: `${PREFIX}store_errors_total`,
      help: "Task store operations that failed (the client got store_unavailable), by operation",
      labelNames: ["operation"],
      registers,
    });
    this.storeDuration = new Histogram({
      name: `${PREFIX}store_operation_duration_seconds`,
      help: "Time each task store operation took, failed ones included, by operation",
      labelNames: ["operation"],
      buckets: STORE_BUCKETS,
      registers,
    });
    this.errorReplies = new Counter({
      name: `${PREFIX}error_replies_total`,
      help: "Error replies to the MCP endpoint that named a reason (error.data.reason; JSON or a stream's last frame), by that reason",
      labelNames: ["reason"],
      registers,
    });
    this.federationCollisions = new Counter({
      name: `${PREFIX}federation_collisions_total`,
      help: "Entries the federated endpoint left out because an earlier backend's entry had the same name or URI, by kind",
      labelNames: ["kind"],
      registers,
    });
    this.federationMissing = new Counter({
      name: `${PREFIX}federation_left_out_total`,
      help: "Federated list answers this backend was left out of (it could not be asked in time)",
      registers,
    });
    // Each series exists (at 0) before its first failure.
    for (const reason of UPSTREAM_REASONS) this.upstreamErrors.labels(reason).inc(0);
    for (const outcome of ["delivered", "retried", "undelivered"]) this.upstreamCancels.labels(outcome).inc(0);
    for (const outcome of PING_OUTCOMES) this.upstreamPings.labels(outcome).inc(0);
    for (const reason of ALL_REASONS) this.errorReplies.labels(reason).inc(0);
    for (const operation of STORE_OPERATIONS) this.storeErrors.labels(operation).inc(0);
    for (const status of FINISHED_STATUSES) this.tasksFinished.labels(status).inc(0);
  }

  /** The gauges of what is held right now; each is read from `sources` at scrape time. */
  observeLive(sources: LiveSources): void {
    const registers = [this.registry];
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name: `${PREFIX}${name}`,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    new Gauge({
      name: `${PREFIX}tasks_held`,
      help: "Tasks whose upstream call this instance hosts, by status",
      labelNames: ["status"],
      registers,
      collect() {
        const counts = sources.tasksByStatus();
        this.set({ status: "working" }, counts.working);
        this.set({ status: "input_required" }, counts.input_required);
      },
    });
    gauge("upstream_calls", "Upstream calls (tools/call, prompts/get, resources/read) running now", () => sources.upstreamCalls());
    gauge("parked_calls", "Inline calls parked between MRTR rounds, waiting for the client's retry", () => sources.parkedCalls());
    gauge("inline_calls", "Inline calls answering a client right now", () => sources.inlineCalls());
    gauge("listen_streams", "Open subscriptions/listen streams", () => sources.listenStreams());
    new Gauge({
      name: `${PREFIX}listen_follows`,
      help: "What the open listen streams follow: tasks, list kinds and resource uris (one per stream and item)",
      labelNames: ["kind"],
      registers,
      collect() {
        const follows = sources.listenFollows();
        this.set({ kind: "task" }, follows.task);
        this.set({ kind: "list" }, follows.list);
        this.set({ kind: "resource" }, follows.resource);
      },
    });
    gauge("upstream_resource_subscriptions", "Resource subscriptions taskgate holds upstream for listen streams", () =>
      sources.upstreamResourceSubscriptions(),
    );
    gauge("upstream_sessions", "Upstream sessions open or opening", () => sources.upstreamSessions());
    gauge(
      "upstream_processes",
      "stdio server processes running (upstream sessions and legacy-door sessions; 0 with an HTTP upstream)",
      () => sources.upstreamProcesses(),
    );
    new Gauge({
      name: `${PREFIX}backend_era`,
      help: "The protocol the backend speaks as last found (1 for it, 0 for the other): legacy (sessions) or modern (2026-07-28)",
      labelNames: ["era"],
      registers,
      collect() {
        const era = sources.backendEra?.();
        this.set({ era: "legacy" }, era === "legacy" ? 1 : 0);
        this.set({ era: "modern" }, era === "modern" ? 1 : 0);
      },
    });
  }

  /** One request to the MCP endpoint ended. `method` must come from a fixed set (see requests_total);
   *  `reason`: the catalogued reason its error reply named. */
  requestDone(method: string, outcome: RequestOutcome, seconds: number, reason?: Reason): void {
    if (reason !== undefined) this.errorReplies.labels(reason).inc();
    let byOutcome = this.requestSeries.get(method);
    if (!byOutcome) this.requestSeries.set(method, (byOutcome = new Map()));
    let series = byOutcome.get(outcome);
    if (!series) {
      series = { count: this.requests.labels(method, outcome), duration: this.requestDuration.labels(method, outcome) };
      byOutcome.set(outcome, series);
    }
    series.count.inc();
    series.duration.observe(seconds);
  }

  taskCreated(): void {
    this.tasksCreated.inc();
  }

  taskFinished(status: string): void {
    this.tasksFinished.labels(status).inc();
  }

  storeOperation(operation: string, seconds: number, failed: boolean): void {
    let series = this.storeSeries.get(operation);
    if (!series) {
      series = { duration: this.storeDuration.labels(operation), errors: this.storeErrors.labels(operation) };
      this.storeSeries.set(operation, series);
    }
    series.duration.observe(seconds);
    if (failed) series.errors.inc();
  }

  /** The federated endpoint left entries out: two backends' entries of `kind` had one name. */
  federationCollision(kind: string): void {
    this.federationCollisions.labels(kind).inc();
  }

  /** The federated endpoint left this registry's backend out of an answer (it could not be asked). */
  federationLeftOut(): void {
    this.federationMissing.inc();
  }

  upstreamFailed(reason: UpstreamReason): void {
    this.upstreamErrors.labels(reason).inc();
  }

  /** How one notifications/cancelled fared (the outcomes of upstream/jsonRpcPeer.ts). */
  upstreamCancel(outcome: "delivered" | "retried" | "undelivered"): void {
    this.upstreamCancels.labels(outcome).inc();
  }

  /** How one liveness ping fared (the outcomes of upstream/upstreamSession.ts). */
  upstreamPing(outcome: PingOutcome): void {
    this.upstreamPings.labels(outcome).inc();
  }

  upstreamNotification(method: string): void {
    this.upstreamNotifications.labels(NOTIFICATIONS.has(method) ? method : "other").inc();
  }

  /** The Content-Type of text(). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Every metric in Prometheus text format (gauges read their sources now): this instance's, then the process's. */
  async text(): Promise<string> {
    const [own, node] = await Promise.all([this.registry.metrics(), processRegistry().metrics()]);
    return `${own}\n${node}`;
  }
}

/** A fleet's /metrics: the series of every backend's registry (each labelled with its backend), then the process's. */
export function mergedMetrics(sources: () => readonly GatewayMetrics[]): { contentType: string; text(): Promise<string> } {
  return {
    contentType: processRegistry().contentType,
    async text() {
      const parts = await Promise.all(sources().map((metrics) => metrics.registry.getMetricsAsJSON()));
      const [own, node] = await Promise.all([AggregatorRegistry.aggregate(parts).metrics(), processRegistry().metrics()]);
      return `${own}\n${node}`;
    },
  };
}

let processMetrics: Registry | undefined;

/** The Node process metrics, registered once per process (they watch the event loop and GC). */
function processRegistry(): Registry {
  if (!processMetrics) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics, prefix: PREFIX, eventLoopMonitoringPrecision: LOOP_DELAY_SAMPLE_MS });
  }
  return processMetrics;
}
