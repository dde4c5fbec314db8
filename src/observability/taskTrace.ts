// A task's trace: a task may live 25 minutes and cross instances, so it is never one open span.
// The request that creates it gives it an origin (that request's span context, kept in the task
// record as W3C keys so any instance can continue it). Each phase of its life — created, waiting
// for input, answered, finished — is a short span whose parent is the origin (one trace id for the
// whole task) and which links to the span of the request that caused the phase (a tasks/update,
// a tasks/cancel, or the creating request itself). Follow-up requests that read the task
// (tasks/get, update, cancel) link their own span to the origin.

import { context, SpanKind, trace } from "@opentelemetry/api";
import { activeSpanContext, extractContext, outgoingMeta, tracer, tracingOn } from "./tracing.js";

/** The origin kept with a task: W3C trace keys (traceparent, tracestate, baggage). */
export type TaskTraceOrigin = Record<string, string>;

export type TaskPhase = "created" | "input_required" | "answered" | "completed" | "failed" | "cancelled";

/** The origin for a task created now: the active span's context, or undefined (off, or no span). */
export function taskOriginHere(): TaskTraceOrigin | undefined {
  if (!activeSpanContext()) return undefined;
  const origin = outgoingMeta();
  return origin.traceparent === undefined ? undefined : origin;
}

/** Records a phase of a task: a span under its origin, linked to the span active now (the cause). */
export function recordTaskPhase(origin: TaskTraceOrigin | undefined, phase: TaskPhase, taskId: string, tool: string): void {
  if (!origin || !tracingOn()) return;
  const parent = originContext(origin);
  const cause = activeSpanContext();
  const span = tracer().startSpan(
    `task ${phase}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: { "taskgate.task.id": taskId, "taskgate.task.phase": phase, "gen_ai.tool.name": tool },
      ...(cause ? { links: [{ context: cause, attributes: { "taskgate.link": "cause" } }] } : {}),
    },
    parent,
  );
  span.end();
}

/** Links the active span (a follow-up request) to the task's origin. */
export function linkToTask(origin: TaskTraceOrigin | undefined, taskId: string): void {
  if (!origin || !tracingOn()) return;
  const active = trace.getSpan(context.active());
  const target = trace.getSpanContext(originContext(origin));
  if (!active || !target) return;
  active.setAttribute("taskgate.task.id", taskId);
  active.addLink({ context: target, attributes: { "taskgate.link": "task" } });
}

function originContext(origin: TaskTraceOrigin) {
  return extractContext(origin);
}
