// Tracing: what the rest of taskgate calls to trace a request, and the one switch. Off (the default)
// every function here answers from the @opentelemetry/api no-op tracer or returns at once, and
// nothing of the SDK is loaded (tracingSdk.ts is imported only when tracing is turned on), so the
// hot path pays a boolean test. On, one process-wide tracer (the process is one instance) makes
// the spans, and the W3C propagators read and write trace context.
// Contract: trace context comes in from the request's `_meta` (SEP-414: traceparent, tracestate,
// baggage) or its HTTP headers, `_meta` winning when the two differ (docs/decisions); it goes out
// in the forwarded request's `_meta`, and transports copy it to their own headers (traceHeadersOf).

import {
  type Attributes,
  type Context,
  context,
  defaultTextMapGetter,
  type Link,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  type Tracer,
  trace,
} from "@opentelemetry/api";

/** What setup installs while tracing is on. */
export interface TracingEngine {
  tracer: Tracer;
  /** W3C trace context and baggage. */
  propagator: TextMapPropagator;
}

/** The API's own no-op tracer (a proxy provider that never gets a delegate). */
const NOOP_TRACER = new ProxyTracerProvider().getTracer("taskgate");
const TRACE_KEYS = ["traceparent", "tracestate", "baggage"] as const;

let engine: TracingEngine | undefined;

/** Installs (or, undefined, removes) the engine; setup and shutdown in tracingSetup.ts call it. */
export function installTracing(next: TracingEngine | undefined): void {
  engine = next;
}

export function tracingOn(): boolean {
  return engine !== undefined;
}

export function tracer(): Tracer {
  return engine?.tracer ?? NOOP_TRACER;
}

/** Where a request's trace context came from. */
export type ContextSource = "_meta" | "headers" | "none";

/**
 * The parent context of a request: its `_meta` trace context when it carries a valid traceparent,
 * else its headers'. `differs`: both carried one and they were not the same.
 */
export function incomingContext(
  headers: Record<string, string | string[] | undefined>,
  meta: Record<string, unknown> | undefined,
): { context: Context; source: ContextSource; differs: boolean } {
  if (!engine) return { context: ROOT_CONTEXT, source: "none", differs: false };
  const metaCarrier = meta && typeof meta.traceparent === "string" ? stringsOf(meta) : undefined;
  const header = headers.traceparent;
  const differs = header !== undefined && metaCarrier !== undefined && header !== metaCarrier.traceparent;
  if (metaCarrier) {
    const fromMeta = engine.propagator.extract(ROOT_CONTEXT, metaCarrier, defaultTextMapGetter);
    // A malformed _meta traceparent is no context at all: the headers' (if any) is used instead.
    if (trace.getSpanContext(fromMeta)) return { context: fromMeta, source: "_meta", differs };
  }
  if (header === undefined) return { context: ROOT_CONTEXT, source: "none", differs: false };
  return { context: engine.propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter), source: "headers", differs };
}

/** The context W3C keys describe (a stored task origin); the root context when off. */
export function extractContext(carrier: Record<string, string>): Context {
  return engine ? engine.propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter) : ROOT_CONTEXT;
}

/** The trace keys of `_meta`, string values only. */
function stringsOf(meta: Record<string, unknown>): Record<string, string> {
  const carrier: Record<string, string> = {};
  for (const key of TRACE_KEYS) if (typeof meta[key] === "string") carrier[key] = meta[key];
  return carrier;
}

/** The trace context of `ctx` as `_meta` keys (traceparent, tracestate, baggage); empty when off or none. */
export function outgoingMeta(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  engine?.propagator.inject(ctx, carrier, { set: (c, key, value) => void (c[key] = value) });
  return carrier;
}

/** `params` with the active trace context in its `_meta` (the same object when there is none to add). */
export function withTraceMeta<P extends Record<string, unknown>>(params: P, ctx: Context = context.active()): P {
  if (!engine) return params;
  const added = outgoingMeta(ctx);
  if (added.traceparent === undefined) return params;
  const meta = typeof params._meta === "object" && params._meta !== null ? (params._meta as Record<string, unknown>) : {};
  return { ...params, _meta: { ...meta, ...added } };
}

/** The trace keys of a message's `_meta`, as HTTP headers (the transport sends both); undefined when none. */
export function traceHeadersOf(meta: unknown): Record<string, string> | undefined {
  if (!engine || typeof meta !== "object" || meta === null) return undefined;
  const carrier = stringsOf(meta as Record<string, unknown>);
  return carrier.traceparent === undefined ? undefined : carrier;
}

/** Runs `fn` with `span` active (its log lines and child spans follow it). */
export function withSpan<T>(span: Span, fn: () => T): T {
  if (!engine) return fn();
  return context.with(trace.setSpan(context.active(), span), fn);
}

/** Marks `span` failed: its status, `error.type` (the reason, else the code) and the message. */
export function failSpan(span: Span, failure: { reason?: string | undefined; code?: number | undefined; message?: string }): void {
  if (!span.isRecording()) return;
  const type = failure.reason ?? (failure.code !== undefined ? String(failure.code) : "error");
  span.setAttribute("error.type", type);
  if (failure.reason !== undefined) span.setAttribute("taskgate.error.reason", failure.reason);
  if (failure.code !== undefined) span.setAttribute("rpc.response.status_code", String(failure.code));
  span.setStatus({ code: SpanStatusCode.ERROR, ...(failure.message !== undefined ? { message: failure.message } : {}) });
}

/** The reason and code an error carries (RpcError data.reason, an UpstreamFailure's reason, a JSON-RPC code). */
export function failureOf(error: unknown): { reason?: string; code?: number; message: string } {
  const found = error as { reason?: unknown; code?: unknown; data?: { reason?: unknown }; error?: { code?: unknown } } | undefined;
  const reason = typeof found?.reason === "string" ? found.reason : typeof found?.data?.reason === "string" ? found.data.reason : undefined;
  const code = typeof found?.code === "number" ? found.code : typeof found?.error?.code === "number" ? found.error.code : undefined;
  return {
    ...(reason !== undefined ? { reason } : {}),
    ...(code !== undefined ? { code } : {}),
    message: error instanceof Error ? error.message : String(error),
  };
}

/**
 * Runs `fn` inside a new span (kind INTERNAL unless told), ended when `fn` settles; a rejection
 * marks it failed with its reason. Off: `fn` runs as is.
 */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  options: { kind?: SpanKind; links?: Link[]; parent?: Context } = {},
): Promise<T> {
  if (!engine) return fn(NOOP_SPAN);
  const parent = options.parent ?? context.active();
  const span = engine.tracer.startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes, ...(options.links ? { links: options.links } : {}) },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (error) {
    failSpan(span, failureOf(error));
    throw error;
  } finally {
    span.end();
  }
}

/** The no-op span (every method does nothing). */
export const NOOP_SPAN: Span = NOOP_TRACER.startSpan("noop");

/** The active span's context, when there is a real one. */
export function activeSpanContext(): SpanContext | undefined {
  if (!engine) return undefined;
  const found = trace.getSpan(context.active())?.spanContext();
  return found && trace.isSpanContextValid(found) ? found : undefined;
}

/** The active span, when tracing is on and one is. */
export function activeSpan(): Span | undefined {
  return engine ? trace.getSpan(context.active()) : undefined;
}

/** A span's ids as log fields. */
export function traceIdsOf(span: Span): { trace_id: string; span_id: string } {
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** What the mixin gives a line outside a span: one shared empty object (off, a log line allocates nothing here). */
const NO_FIELDS: Readonly<Record<string, string>> = Object.freeze({});

/** Log fields of the active span (pino mixin): trace_id and span_id, or nothing. */
export function traceLogFields(): Readonly<Record<string, string>> {
  const active = activeSpanContext();
  return active ? { trace_id: active.traceId, span_id: active.spanId } : NO_FIELDS;
}

/** pino's mixinMergeStrategy for traceLogFields: the line's own fields win; outside a span the line is left as it is. */
export function mergeTraceFields(line: object, fields: object): object {
  return fields === NO_FIELDS ? line : Object.assign(fields, line);
}

export { type Attributes, type Context, type Span, SpanKind };
