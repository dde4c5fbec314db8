// The OpenTelemetry SDK, loaded only when tracing is on (tracingSetup.ts imports this module at
// run time). Configured the standard way, from the OTEL_* environment: the exporter's endpoint,
// headers and timeout (read by the OTLP exporters themselves), its protocol
// (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf, the default,
// or http/json), OTEL_TRACES_EXPORTER (otlp, console or none), the sampler (OTEL_TRACES_SAMPLER and
// its argument, read by the tracer provider; default parentbased_always_on), and the resource
// (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, over tracing.serviceName). Spans leave in batches
// (OTEL_BSP_* tune them); shutdown flushes what is left.

import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, ConsoleSpanExporter, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import type { TracingEngine } from "./tracing.js";

export interface SdkOptions {
  serviceName: string;
  version: string;
  env: NodeJS.ProcessEnv;
}

export interface StartedSdk {
  engine: TracingEngine;
  /** What the spans are sent to, for the start-up log line. */
  exporter: string;
  /** Flushes the spans not yet sent, then stops. */
  shutdown(): Promise<void>;
}

/** The protocols taskgate's OTLP exporters speak. */
export const OTLP_PROTOCOLS = ["http/protobuf", "http/json"] as const;

export function startSdk(options: SdkOptions): StartedSdk {
  const { exporter, label } = exporterFor(options.env);
  const resource = defaultResource()
    .merge(resourceFromAttributes({ "service.name": options.serviceName, "service.version": options.version }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: exporter ? [new BatchSpanProcessor(exporter)] : [],
  });
  // One context manager per process (AsyncLocalStorage); a second start keeps the first one.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  return {
    engine: {
      tracer: provider.getTracer("taskgate", options.version),
      propagator: new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
    },
    exporter: label,
    shutdown: () => provider.shutdown(),
  };
}

function exporterFor(env: NodeJS.ProcessEnv): { exporter?: SpanExporter; label: string } {
  const kind = (env.OTEL_TRACES_EXPORTER ?? "otlp").split(",")[0]!.trim();
  if (kind === "none") return { label: "none (OTEL_TRACES_EXPORTER)" };
  if (kind === "console") return { exporter: new ConsoleSpanExporter(), label: "console" };
  if (kind !== "otlp") throw new Error(`OTEL_TRACES_EXPORTER '${kind}' is not supported: use otlp, console or none`);
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf";
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT ?? "http://localhost:4318";
  if (protocol === "http/protobuf") return { exporter: new ProtobufExporter(), label: `otlp ${protocol} ${endpoint}` };
  if (protocol === "http/json") return { exporter: new JsonExporter(), label: `otlp ${protocol} ${endpoint}` };
  throw new Error(`OTLP protocol '${protocol}' is not supported: use ${OTLP_PROTOCOLS.join(" or ")} (OTEL_EXPORTER_OTLP_PROTOCOL)`);
}
