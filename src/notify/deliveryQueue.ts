// DeliveryQueue: notifications on their way to receivers, never in the way of a task. push() only
// enqueues (a full queue drops the delivery, logged and counted); a few workers send; a failed send
// is retried after backoffMs, doubled each time up to maxBackoffMs, until `attempts` sends; each send
// is given at most timeoutMs (its AbortSignal). Every outcome is logged (pino) and counted (prom).
// close() stops the timers and drops what is still waiting.

import type { Logger } from "pino";
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
  /** Deliveries waiting for a retry. */
  private readonly retrying = new Set<NodeJS.Timeout>();
  private sending = 0;
  private closed = false;
  private readonly idle: Array<() => void> = [];

  constructor(
    private readonly limits: DeliveryLimits,
    private readonly metrics: NotifyMetrics,
    private readonly log: Logger,
  ) {}

  /** Deliveries queued, waiting for a retry, or being sent. */
  get size(): number {
    return this.ready.length + this.retrying.size + this.sending;
  }

  push(delivery: Delivery): void {
    if (this.closed) return;
    if (this.size >= this.limits.queueSize) {
      this.metrics.count(delivery.channel, "dropped");
      this.log.warn(
        {
          event: "notify.dropped",
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

  close(): void {
    this.closed = true;
    for (const timer of this.retrying) clearTimeout(timer);
    this.retrying.clear();
    this.ready.length = 0;
    this.wake();
  }

  private pump(): void {
    while (this.sending < WORKERS && this.ready.length > 0) {
      const next = this.ready.shift() as Queued;
      this.sending += 1;
      void this.sendOnce(next).finally(() => {
        this.sending -= 1;
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
      this.metrics.count(delivery.channel, "delivered");
      this.log.info({ event: "notify.delivered", ...line }, "notification delivered");
      return;
    } catch (error) {
      const why = describe(error, this.limits.timeoutMs);
      const last = attempt >= this.limits.attempts || error instanceof PermanentFailure || this.closed;
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
      this.retrying.add(timer);
    }
  }
}

function describe(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return `no answer within ${timeoutMs} ms (notify.timeoutMs)`;
  }
  return error instanceof Error ? error.message : String(error);
}
