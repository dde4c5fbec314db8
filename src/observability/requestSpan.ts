// The server span of one request to the MCP endpoint, named and described as the MCP semantic
// conventions say (`{mcp.method.name} {target}`, mcp.method.name, jsonrpc.request.id,
// gen_ai.tool.name, …), with taskgate's own words where they have none: the identity as its
// subject hash (never the subject), the task, the backend, the request's outcome and, on errors,
// the error's data.reason. Its parent comes from the request's `_meta` or headers (tracing.ts).

import { type Attributes, type Span, SpanKind } from "@opentelemetry/api";
import { failSpan, incomingContext, tracer, tracingOn } from "./tracing.js";

export const MCP_VERSION = "2026-07-28";

export interface RequestSpanInput {
  method: string;
  id: string | number;
  params: Record<string, unknown>;
  meta: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  /** sha256 of the identity's subject. */
  ownerHash: string;
}

/** The request's span, started; undefined when tracing is off. */
export function startRequestSpan(input: RequestSpanInput): Span | undefined {
  if (!tracingOn()) return undefined;
  const parent = incomingContext(input.headers, input.meta);
  const attributes: Attributes = {
    "mcp.method.name": input.method,
    "mcp.protocol.version": MCP_VERSION,
    "jsonrpc.request.id": String(input.id),
    "jsonrpc.protocol.version": "2.0",
    "rpc.system.name": "jsonrpc",
    "rpc.method": input.method,
    "network.transport": "tcp",
    "taskgate.identity.subject_hash": input.ownerHash,
    "taskgate.trace_context.source": parent.source,
    ...targetAttributes(input.method, input.params),
  };
  if (parent.differs) attributes["taskgate.trace_context.headers_differ"] = true;
  return tracer().startSpan(spanName(input.method, input.params), { kind: SpanKind.SERVER, attributes }, parent.context);
}

/** `{method} {target}`: the tool or prompt name when there is one (low cardinality), else the method. */
export function spanName(method: string, params: Record<string, unknown>): string {
  const name = (method === "tools/call" || method === "prompts/get") && typeof params.name === "string" ? params.name : undefined;
  return name ? `${method} ${name}` : method;
}

/** What the request acts on: tool, prompt, resource or task. */
export function targetAttributes(method: string, params: Record<string, unknown>): Attributes {
  const found: Attributes = {};
  if (method === "tools/call" && typeof params.name === "string") {
    found["gen_ai.tool.name"] = params.name;
    found["gen_ai.operation.name"] = "execute_tool";
  }
  if (method === "prompts/get" && typeof params.name === "string") found["gen_ai.prompt.name"] = params.name;
  if (typeof params.uri === "string" && method.startsWith("resources/")) found["mcp.resource.uri"] = params.uri;
  if (method.startsWith("tasks/") && typeof params.taskId === "string") found["taskgate.task.id"] = params.taskId;
  return found;
}

/** Ends the request's span with what became of it (the request's log note and its outcome word). */
/** What the request's note says of it (protocol/requestNote.ts). */
export interface NotedRequest {
  taskId?: string;
  backend?: string;
  error?: number;
  reason?: string;
  detail?: string;
}

export function endRequestSpan(span: Span | undefined, note: NotedRequest, outcome: string, httpStatus: number): void {
  if (!span) return;
  span.setAttribute("taskgate.outcome", outcome);
  span.setAttribute("http.response.status_code", httpStatus);
  if (typeof note.taskId === "string") span.setAttribute("taskgate.task.id", note.taskId);
  if (typeof note.backend === "string") span.setAttribute("taskgate.backend", note.backend);
  const code = typeof note.error === "number" ? note.error : undefined;
  const reason = typeof note.reason === "string" ? note.reason : undefined;
  if (outcome === "failed" || outcome === "error" || code !== undefined || reason !== undefined) {
    failSpan(span, { reason, code, message: typeof note.detail === "string" ? note.detail : outcome });
  }
  span.end();
}
