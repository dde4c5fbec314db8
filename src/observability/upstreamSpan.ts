// The client span of one request taskgate sends upstream (HTTP or stdio alike: it is made where
// JSON-RPC requests are numbered, upstream/jsonRpcPeer.ts; for a modern backend in
// upstream/modernLink.ts; for the legacy doors where they forward a request), named as the MCP
// semantic conventions say, with the trace context written into the request's `_meta` (SEP-414; the HTTP transport
// copies it into its headers). A failure marks the span with its reason (upstream_timeout, …) or
// the upstream's JSON-RPC code. Liveness pings and the polls of a 2025-11-25 upstream task run for
// as long as a session or a task lives and would bury a trace: they get no span.

import { type Attributes, context, type Span, SpanKind, trace } from "@opentelemetry/api";
import { spanName, targetAttributes } from "./requestSpan.js";
import { failSpan, failureOf, tracer, tracingOn, withTraceMeta } from "./tracing.js";

const UNTRACED = new Set(["ping", "tasks/get"]);

export interface UpstreamTarget {
  /** A URL (HTTP upstream) or a command line (stdio). */
  readonly target: string;
  readonly sessionId: string | undefined;
}

/**
 * Starts the span of an upstream request and returns the params to send (with its `_meta` trace
 * context); undefined when tracing is off or the method goes untraced.
 */
export function startUpstreamSpan<P extends Record<string, unknown>>(
  method: string,
  id: string | number,
  params: P,
  upstream: UpstreamTarget,
): { span: Span; params: P } | undefined {
  if (UNTRACED.has(method)) return undefined;
  return startClientSpan(method, id, params, upstream.target);
}

/** The client span of one request to `target` (a URL or a command line), whatever its method; undefined when off. */
export function startClientSpan<P extends Record<string, unknown>>(
  method: string,
  id: string | number,
  params: P,
  target: string,
): { span: Span; params: P } | undefined {
  if (!tracingOn()) return undefined;
  const attributes: Attributes = {
    "mcp.method.name": method,
    "jsonrpc.request.id": String(id),
    "jsonrpc.protocol.version": "2.0",
    "rpc.system.name": "jsonrpc",
    "rpc.method": method,
    ...transportAttributes(target),
    ...targetAttributes(method, params),
  };
  const parent = context.active();
  const span = tracer().startSpan(spanName(method, params), { kind: SpanKind.CLIENT, attributes }, parent);
  return { span, params: withTraceMeta(params, trace.setSpan(parent, span)) };
}

/** Ends the span when the request settles; returns the request's promise unchanged. */
export function endUpstreamSpan<T>(span: Span, request: Promise<T>): Promise<T> {
  request.then(
    () => span.end(),
    (error: unknown) => {
      failSpan(span, failureOf(error));
      span.end();
    },
  );
  return request;
}

/** Ends the span with the upstream's JSON-RPC response: an error marks it failed (its code, its data.reason). */
export function endClientSpan(span: Span, response: { error?: unknown } | undefined): void {
  const error = response?.error as { code?: unknown; message?: unknown; data?: { reason?: unknown } } | undefined;
  if (typeof error === "object" && error !== null) {
    const reason = typeof error.data?.reason === "string" ? error.data.reason : undefined;
    failSpan(span, {
      reason,
      code: typeof error.code === "number" ? error.code : undefined,
      message: typeof error.message === "string" ? error.message : "error",
    });
  }
  span.end();
}

function transportAttributes(target: string): Attributes {
  if (!/^https?:\/\//.test(target)) return { "network.transport": "pipe", "taskgate.upstream.command": target.slice(0, 200) };
  try {
    const url = new URL(target);
    const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
    return { "network.transport": "tcp", "network.protocol.name": "http", "server.address": url.hostname, "server.port": port };
  } catch {
    return { "network.transport": "tcp" };
  }
}
