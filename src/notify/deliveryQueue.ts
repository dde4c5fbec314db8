// DeliveryQueue: notifications on their way to receivers, never in the way of a task. push() only
// enqueues (a full queue drops the delivery, logged and counted); a few workers send; a failed send
// is retried after backoffMs, doubled each time up to maxBackoffMs, until `attempts` sends; each send
// is given at most timeoutMs (its AbortSignal). Every outcome is logged (pino) and counted (prom).
// At shutdown flush() gives what is queued or waiting for a retry one last send, all within a limit
// (the tasks a shutdown fails are told so); what is still unsent then is counted and logged as
// dropped. close() stops the timers and drops what is still waiting.

import type { Logger } from "pino";
import { withDeadline } from "../util/timeLimit.js";
import type { NotifyMetrics } from "./notifyMetrics.js";

export interface Delivery {
  /** "webhook" | "webpush": the metric's channel label. */
  channel: "webhook" | "webpush";
  /** For logs: where it goes (a webhook's URL origin, a push service's host), never a secret. */
  target: string;
  taskId: string;
  event: string;
  /** One send: resolves when the receiver took it; throws otherwise. `permanent` errors are not retried. */
  send(signal: AbortSignal): Promise<void>;
}

export class PermanentFailure extends Error {
  override readonly name = "PermanentFailure";
}

export interface DeliveryLimits {
  timeoutMs: number;
  attempts: number;
  backoffMs: number;
  maxBackoffMs: number;
  queueSize: number;
}

const WORKERS = 4;

interface Queued {
  delivery: Delivery;
  attempt: number;
}

export class DeliveryQueue {
  private readonly ready: Queued[] = [];
  /** Deliveries waiting for a retry, by their timer. */
  private readonly retrying = new Map<NodeJS.Timeout, Queued>();
  private readonly inFlight = new Set<Queued>();
  private closed = false;
  /** Set by flush(): a failed send is the last one. */
  private final = false;
  /** Set when flush() gave up: what was left is counted as dropped, so nothing more is sent or counted. */
  private gaveUp = false;
  private readonly idle: Array<() => void> = [];

  constructor(
    private readonly limits: DeliveryLimits,
    private readonly metrics: NotifyMetrics,
    private readonly log: Logger,
  ) {}

  /** Deliveries queued, waiting for a retry, or being sent. */
  get size(): number {
    return this.ready.length + this.retrying.size + this.inFlight.size;
  }

  push(delivery: Delivery): void {
    if (this.closed) return;
    if (this.size >= this.limits.queueSize) {
      this.metrics.count(delivery.channel, "dropped");
      this.log.warn(
        {
          event: "notify.dropped",
          reason: "queue_full",
          channel: delivery.channel,
          target: delivery.target,
          taskId: delivery.taskId,
          queueSize: this.limits.queueSize,
        },
        "notification dropped: the queue is full (notify.queueSize)",
      );
      return;
    }
    this.ready.push({ delivery, attempt: 1 });
    this.pump();
  }

  /** Resolves once nothing is queued, retrying or in flight (tests, shutdown). */
  settled(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /**
   * Shutdown: each delivery queued or waiting for a retry is sent now, once (no more retries), all
   * within `limitMs`; what is still unsent or unanswered then is counted as dropped, in one log line.
   */
  async flush(limitMs: number): Promise<void> {
    this.final = true;
    for (const [timer, queued] of this.retrying) {
      clearTimeout(timer);
      this.ready.push({ delivery: queued.delivery, attempt: queued.attempt + 1 });
    }
    this.retrying.clear();
    this.pump();
    if (
      await withDeadline(
        this.settled().then(() => true),
        limitMs,
        false,
      )
    )
      return;
    this.gaveUp = true;
    const left = [...this.inFlight, ...this.ready];
    const channels: Record<string, number> = {};
    for (const queued of left) {
      this.metrics.count(queued.delivery.channel, "dropped");
      channels[queued.delivery.channel] = (channels[queued.delivery.channel] ?? 0) + 1;
    }
    this.log.warn(
      { event: "notify.dropped", reason: "shutdown", count: left.length, channels, limitMs },
      `${left.length} notifications not delivered before shutdown: the receivers did not answer within ${limitMs} ms (notify.timeoutMs)`,
    );
  }

  close(): void {
    this.closed = true;
    for (const timer of this.retrying.keys()) clearTimeout(timer);
    this.retrying.clear();
    this.ready.length = 0;
    this.wake();
  }

  private pump(): void {
    while (!this.gaveUp && this.inFlight.size < WORKERS && this.ready.length > 0) {
      const next = this.ready.shift() as Queued;
      this.inFlight.add(next);
      void this.sendOnce(next).finally(() => {
        this.inFlight.delete(next);
        this.pump();
        this.wake();
      });
    }
  }

  private wake(): void {
    if (this.size > 0) return;
    for (const resolve of this.idle.splice(0)) resolve();
  }

  private async sendOnce(queued: Queued): Promise<void> {
    const { delivery, attempt } = queued;
    const line = { channel: delivery.channel, target: delivery.target, taskId: delivery.taskId, notifyEvent: delivery.event, attempt };
    try {
      await delivery.send(AbortSignal.timeout(this.limits.timeoutMs));
      if (this.gaveUp) return;
      this.metrics.count(delivery.channel, "delivered");
      this.log.info({ event: "notify.delivered", ...line }, "notification delivered");
      return;
    } catch (error) {
      if (this.gaveUp) return;
      const why = describe(error, this.limits.timeoutMs);
      const last = attempt >= this.limits.attempts || error instanceof PermanentFailure || this.closed || this.final;
      this.metrics.count(delivery.channel, last ? "failed" : "retried");
      if (last) {
        this.log.warn({ event: "notify.failed", ...line, err: why }, "notification not delivered; given up");
        return;
      }
      const waitMs = Math.min(this.limits.backoffMs * 2 ** (attempt - 1), this.limits.maxBackoffMs);
      this.log.info({ event: "notify.retry", ...line, err: why, waitMs }, "notification delivery failed; retrying");
      const timer = setTimeout(() => {
        this.retrying.delete(timer);
        this.ready.push({ delivery, attempt: attempt + 1 });
        this.pump();
      }, waitMs); // not unref'd: a retry keeps the process up until close() clears it
      this.retrying.set(timer, queued);
    }
  }
}

function describe(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return `no answer within ${timeoutMs} ms (notify.timeoutMs)`;
  }
  return error instanceof Error ? error.message : String(error);
}
