// An OTLP/HTTP endpoint for the bench's traced taskgate: it takes every export (POST /v1/traces,
// protobuf as the exporter sends by default), answers 200 as a collector does, and counts what it
// got, so the run shows the spans really left taskgate. It runs in the bench process; the cost
// measured is taskgate's (its CPU is read from its own process).

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { onCleanup } from "./cleanup.js";

export interface OtlpSink {
  endpoint: string;
  exports: number;
  bytes: number;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  const sink: OtlpSink = { endpoint: "", exports: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on("data", (chunk: Buffer) => (sink.bytes += chunk.length));
    req.on("end", () => {
      sink.exports++;
      res.writeHead(200, { "Content-Type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  sink.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  onCleanup("OTLP sink", async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return sink;
}
