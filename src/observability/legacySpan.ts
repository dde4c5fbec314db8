// The spans of a request an old (2025-era) client sends through one of the legacy doors: the
// pass-through (http/passThrough.ts), the stdio bridge (http/stdioBridge.ts) and the old-client door
// of a modern backend (http/oldClientDoor.ts). Each POST carrying one JSON-RPC request gets a server
// span, named and described as the modern door's are (`{mcp.method.name} {target}`), plus the session
// (mcp.session.id), the version the client speaks and, when the door authenticates, the caller's
// subject hash; its parent is the request's `_meta` trace
// context, else its headers', as at the modern door. Notifications, answers to the server's
// questions, batches, GET streams, DELETEs and pings get none (they are the session's plumbing).
// The upstream side is a client span (upstreamSpan.ts), made by the door that forwards.

import type { IncomingMessage } from "node:http";
import { type Attributes, type Span, SpanKind } from "@opentelemetry/api";
import { spanName, targetAttributes } from "./requestSpan.js";
import { failSpan, incomingContext, tracer, tracingOn } from "./tracing.js";

/** Which legacy door served the request (taskgate.door). */
export type LegacyDoor = "pass_through" | "stdio_bridge" | "old_client";

/** A JSON-RPC request as the legacy doors read it. */
export interface LegacyRequest {
  method: string;
  id: string | number;
  params: Record<string, unknown>;
}

/** The message when it is one JSON-RPC request worth a span; undefined otherwise. */
export function tracedRequestOf(message: unknown): LegacyRequest | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined;
  const { method, id, params } = message as { method?: unknown; id?: unknown; params?: unknown };
  if (typeof method !== "string" || method === "ping") return undefined;
  if (typeof id !== "string" && typeof id !== "number") return undefined;
  const plain = typeof params === "object" && params !== null && !Array.isArray(params) ? (params as Record<string, unknown>) : {};
  return { method, id, params: plain };
}

/** The server span of a legacy request (`owner`: the caller's subject hash, when the door authenticates);
 *  undefined when tracing is off or the message gets none. */
export function startLegacySpan(req: IncomingMessage, message: unknown, door: LegacyDoor, owner?: string): Span | undefined {
  if (!tracingOn()) return undefined;
  const request = tracedRequestOf(message);
  if (!request) return undefined;
  const meta = request.params._meta;
  const parent = incomingContext(req.headers, typeof meta === "object" && meta !== null ? (meta as Record<string, unknown>) : undefined);
  const session = req.headers["mcp-session-id"];
  const version = request.method === "initialize" ? request.params.protocolVersion : req.headers["mcp-protocol-version"];
  const attributes: Attributes = {
    "mcp.method.name": request.method,
    "jsonrpc.request.id": String(request.id),
    "jsonrpc.protocol.version": "2.0",
    "rpc.system.name": "jsonrpc",
    "rpc.method": request.method,
    "network.transport": "tcp",
    "taskgate.door": door,
    "taskgate.trace_context.source": parent.source,
    ...(typeof version === "string" ? { "mcp.protocol.version": version.slice(0, 40) } : {}),
    ...(typeof session === "string" ? { "mcp.session.id": session } : {}),
    ...(owner !== undefined ? { "taskgate.identity.subject_hash": owner } : {}),
    ...targetAttributes(request.method, request.params),
  };
  if (parent.differs) attributes["taskgate.trace_context.headers_differ"] = true;
  return tracer().startSpan(spanName(request.method, request.params), { kind: SpanKind.SERVER, attributes }, parent.context);
}

/** Spans already marked failed (their outcome is not overwritten when they end). */
const failed = new WeakSet<Span>();

/** Marks a legacy span failed: by the JSON-RPC response it answered with (its code, its data.reason), or by `failure`. */
export function failLegacySpan(span: Span, response: { error?: unknown } | undefined, failure?: { reason: string; message: string }): void {
  const error = response?.error as { code?: unknown; message?: unknown; data?: { reason?: unknown } } | undefined;
  if (failure) {
    failSpan(span, failure);
  } else if (typeof error === "object" && error !== null) {
    failSpan(span, {
      reason: typeof error.data?.reason === "string" ? error.data.reason : undefined,
      code: typeof error.code === "number" ? error.code : undefined,
      message: typeof error.message === "string" ? error.message : "error",
    });
  } else {
    return;
  }
  failed.add(span);
  span.setAttribute("taskgate.outcome", "error");
}

/** Ends a legacy span once its HTTP response ended. */
export function endLegacySpan(span: Span, httpStatus: number, finished: boolean): void {
  span.setAttribute("http.response.status_code", httpStatus);
  if (!failed.has(span)) span.setAttribute("taskgate.outcome", httpStatus >= 400 ? "error" : finished ? "ok" : "client_gone");
  span.end();
}

/** The most of a proxied response read to find its JSON-RPC response (a larger one is not looked into). */
const RESPONSE_PEEK_BYTES = 256 * 1024;

/**
 * Reads along a proxied response (JSON, or an SSE stream) without consuming it, and tells
 * `done` the JSON-RPC response to request `id` in it, if any, once it ended.
 */
export function watchResponse(
  response: IncomingMessage,
  id: string | number,
  done: (found: Record<string, unknown> | undefined) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  response.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size <= RESPONSE_PEEK_BYTES) chunks.push(chunk);
  });
  // At its end (before the reply to the client ends, which ends the door's span), or when it broke off.
  let told = false;
  const finish = () => {
    if (told) return;
    told = true;
    done(size <= RESPONSE_PEEK_BYTES ? responseIn(Buffer.concat(chunks).toString("utf8"), id) : undefined);
  };
  response.once("end", finish);
  response.once("close", finish);
}

/** The response to `id` in a JSON body or in an SSE stream's data lines. */
function responseIn(text: string, id: string | number): Record<string, unknown> | undefined {
  const candidates = text.trimStart().startsWith("{")
    ? [text]
    : text.split("\n").flatMap((line) => (line.startsWith("data:") ? [line.slice(5)] : []));
  for (const candidate of candidates) {
    try {
      const message = JSON.parse(candidate) as Record<string, unknown>;
      if (message.id === id && (message.result !== undefined || message.error !== undefined)) return message;
    } catch {
      // not JSON: not the response
    }
  }
  return undefined;
}
