// GET /metrics when collecting fails: a gauge's source that throws must give the scraper a 500
// (Prometheus marks the scrape failed: up == 0) and the log a metrics.failed line saying why,
// never a hung request or a half-written text. Collection cannot be made to fail with the real
// parts, so the source here is a FAKE that throws; the success path runs against real gateways
// in test/e2e/metrics.test.ts.

import assert from "node:assert/strict";
import { test } from "node:test";
import express from "express";
import request from "supertest";
import { mountMetrics } from "../../src/http/metricsEndpoint.js";
import { createLogger } from "../../src/observability/logger.js";
import { LogCapture } from "../support/logCapture.js";

test("a source that throws: 500 naming the log event, and the log says what failed", async () => {
  const logs = new LogCapture();
  const app = express();
  const failingSource = {
    contentType: "text/plain; version=0.0.4; charset=utf-8",
    text: async (): Promise<string> => {
      throw new Error("the task runner is gone");
    },
  };
  mountMetrics(app, failingSource, createLogger("info", logs));
  const response = await request(app)
    .get("/metrics")
    .expect(500)
    .expect("Content-Type", /text\/plain/);
  assert.match(response.text, /metrics\.failed/);
  const [line] = logs.lines.filter((l) => l.event === "metrics.failed");
  assert.equal(line?.err, "the task runner is gone");
});
