// GET /metrics: the instance's metrics in Prometheus text format. Like the health endpoints it
// answers whatever the Host (Prometheus scrapes a pod by its address) and asks for no token: it
// carries counts and timings only, labelled by method, outcome, status, reason or operation,
// never by an identity, a token or a task id.

import type { Express } from "express";
import type { Logger } from "pino";

export interface MetricsSource {
  readonly contentType: string;
  text(): Promise<string>;
}

export function mountMetrics(app: Express, metrics: MetricsSource, log: Logger): void {
  app.get("/metrics", async (_req, res) => {
    let body: string;
    try {
      body = await metrics.text();
    } catch (error) {
      // A gauge whose source threw: say so to the scraper (it records the scrape as failed) and in the log.
      log.error({ event: "metrics.failed", err: error instanceof Error ? error.message : String(error) }, "metrics collection failed");
      res.status(500).type("text/plain").send("taskgate could not collect its metrics; see the log (event metrics.failed)\n");
      return;
    }
    res.set("Content-Type", metrics.contentType).send(body);
  });
}
