// What the tracing tests share: a real OTLP/HTTP receiver in the test process that a taskgate with
// tracing on exports to (JSON, batched every 50 ms), random W3C trace contexts for the client, a
// taskgate in front of an upstream whose log lines are kept, and the spans of one trace looked up.

import { Writable } from "node:stream";
import { type ConfigInput, ConfigSchema } from "../../src/config/schema.js";
import { type Gateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/observability/logger.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "./servers/otlpReceiver.js";

const hex = (n: number) => [...crypto.getRandomValues(new Uint8Array(n))].map((b) => b.toString(16).padStart(2, "0")).join("");

/** A client's trace: its id and the span taskgate's must be the child of. */
export const newTrace = () => ({ traceId: hex(16), parent: hex(8) });
export const traceparent = (t: { traceId: string; parent: string }) => `00-${t.traceId}-${t.parent}-01`;

/** The receiver, with the OTEL_* environment pointing taskgate's exporter at it (call in `before`). */
export async function startTraceReceiver(): Promise<OtlpReceiver> {
  const receiver = await startOtlpReceiver();
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = "http/json";
  process.env.OTEL_BSP_SCHEDULE_DELAY = "50";
  process.env.OTEL_SERVICE_NAME = "taskgate-under-test";
  process.env.OTEL_RESOURCE_ATTRIBUTES = "deployment.environment.name=under-test";
  return receiver;
}

/** A taskgate with tracing on in front of `upstream`, its JSON log lines pushed to `logLines`. */
export function tracedGateway(
  upstream: ConfigInput["upstream"],
  extra: Partial<ConfigInput> = {},
  logLines: JsonObject[] = [],
): Promise<Gateway> {
  const lines = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) if (line) logLines.push(JSON.parse(line) as JsonObject);
      done();
    },
  });
  const config = ConfigSchema.parse({
    port: 0,
    auth: { mode: "demo" },
    shutdown: { graceMs: 0 },
    tracing: { enabled: true },
    upstream,
    ...extra,
  });
  return startGateway(config, { log: createLogger("info", lines) });
}

/** What a trace_context tool answered: the traceparent the upstream saw in `_meta` and in its headers. */
export function seenBy(result: JsonObject): { meta: string | null; header: string | null } {
  const content = result.content as { text: string }[];
  return JSON.parse(content[0]!.text) as { meta: string | null; header: string | null };
}

export const spanOf = (spans: ReceivedSpan[], traceId: string, name: string, kind?: number) =>
  spans.find((s) => s.traceId === traceId && s.name === name && (kind === undefined || s.kind === kind));
