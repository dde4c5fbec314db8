// The notifications' counter, in its own registry (merged into /metrics by the gateway):
// taskgate_notifications_total{channel (webhook, webpush), outcome (delivered, retried, failed,
// dropped)}. Labels come from those fixed sets only.

import { Counter, Registry } from "prom-client";

export type NotifyOutcome = "delivered" | "retried" | "failed" | "dropped";

export class NotifyMetrics {
  readonly registry = new Registry();
  private readonly total = new Counter({
    name: "taskgate_notifications_total",
    help: "notification deliveries by channel and outcome (retried: a failed send that will be tried again)",
    labelNames: ["channel", "outcome"] as const,
    registers: [this.registry],
  });

  constructor() {
    for (const channel of ["webhook", "webpush"])
      for (const outcome of ["delivered", "retried", "failed", "dropped"]) this.total.inc({ channel, outcome }, 0);
  }

  count(channel: "webhook" | "webpush", outcome: NotifyOutcome): void {
    this.total.inc({ channel, outcome });
  }
}
