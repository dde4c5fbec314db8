// An OTLP/HTTP trace receiver in the test process: it accepts POST /v1/traces as the OTLP
// specification's JSON encoding (what taskgate's exporter sends under
// OTEL_EXPORTER_OTLP_PROTOCOL=http/json), answers the export as a collector does, and keeps every
// span it received, flattened. A test waits for the spans it expects (an event per export), never
// for a fixed time.

import { EventEmitter } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: KeyValue[];
  links?: { traceId: string; spanId: string; attributes?: KeyValue[] }[];
  status?: { code?: number; message?: string };
}
interface ExportTraceServiceRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean | undefined>;
  links: { traceId: string; spanId: string; attributes: Record<string, string | number | boolean | undefined> }[];
  /** 2: error. */
  statusCode: number;
  resource: Record<string, string | number | boolean | undefined>;
}

export const SERVER = 2;
export const CLIENT = 3;

export interface OtlpReceiver {
  /** The base URL for OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  spans: ReceivedSpan[];
  /** The spans once `match` finds what it needs in them (within `ms`, else an error saying what was received). */
  waitFor<T>(what: string, match: (spans: ReceivedSpan[]) => T | undefined, ms?: number): Promise<T>;
  close(): Promise<void>;
}

const plainValue = (value: AnyValue) =>
  value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue));
const attributesOf = (list: KeyValue[] = []) => Object.fromEntries(list.map((kv) => [kv.key, plainValue(kv.value)]));

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const events = new EventEmitter();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces" || !String(req.headers["content-type"]).startsWith("application/json")) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ExportTraceServiceRequest;
      for (const resourceSpans of body.resourceSpans ?? []) {
        const resource = attributesOf(resourceSpans.resource?.attributes);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || undefined,
              name: span.name,
              kind: span.kind,
              attributes: attributesOf(span.attributes),
              links: (span.links ?? []).map((link) => ({
                traceId: link.traceId,
                spanId: link.spanId,
                attributes: attributesOf(link.attributes),
              })),
              statusCode: span.status?.code ?? 0,
              resource,
            });
          }
        }
      }
      res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
      events.emit("export");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    waitFor(what, match, ms = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = match(spans);
          if (found === undefined) return false;
          clearTimeout(timer);
          events.off("export", check);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          events.off("export", check);
          reject(new Error(`no ${what} within ${ms} ms; received: ${spans.map((s) => `${s.name}@${s.traceId.slice(0, 8)}`).join(", ")}`));
        }, ms);
        if (!check()) events.on("export", check);
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
