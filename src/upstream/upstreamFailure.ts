// UpstreamFailure: every way talking to the upstream can fail, each with the cause a person can act
// on, the HTTP status a proxy would answer (502 bad gateway, 503 unavailable, 504 timeout) and a
// machine word in error.data.reason. toClientError() turns whatever an upstream request threw into
// the JSON-RPC error a 2026-07-28 client gets: an upstream's own JSON-RPC error keeps its code
// (legacy -32002 becomes -32602); our failures are -32603 with their reason.

import { internalError, RpcError, upstreamFailureError, upstreamOwnError } from "../protocol/errors.js";
import { REASONS, type UpstreamReason } from "../protocol/reasons.js";
import type { JsonRpcErrorObject } from "../protocol/wire.js";

/** The reasons, statuses and message templates are catalogued in protocol/reasons.ts. */
export type FailureReason = UpstreamReason;

export class UpstreamFailure extends Error {
  readonly httpStatus: number;
  /** More for error.data besides the reason (e.g. the upstream's HTTP status). */
  readonly data?: Record<string, unknown>;

  constructor(
    readonly reason: FailureReason,
    message: string,
    options?: { cause?: unknown; httpStatus?: number; data?: Record<string, unknown> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "UpstreamFailure";
    this.httpStatus = options?.httpStatus ?? REASONS[reason].httpStatus;
    if (options?.data) this.data = options.data;
  }

  toRpcError(): RpcError {
    return upstreamFailureError(this.reason, this.message, this.data, this.httpStatus);
  }
}

/** The upstream refused a request because it no longer knows the session: the request never ran. */
export const isSessionGone = (error: unknown): error is UpstreamFailure =>
  error instanceof UpstreamFailure && error.reason === "session_gone";

/** A JSON-RPC error the upstream answered (its own words and code). */
export class UpstreamRpcError extends Error {
  constructor(readonly error: JsonRpcErrorObject) {
    super(error.message);
    this.name = "UpstreamRpcError";
  }
}

/** The call was stopped on our side (client gone, task cancelled, shutdown). */
export class CallStopped extends Error {
  constructor(readonly why: string) {
    // Stopped on purpose, often thousands at once (a mass cancel): no stack to capture.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(why);
    Error.stackTraceLimit = limit;
    this.name = "CallStopped";
  }
}

/** The JSON-RPC error a client gets for what an upstream request threw. */
export function toClientError(error: unknown): RpcError {
  if (error instanceof RpcError) return error;
  if (error instanceof UpstreamRpcError) {
    // SDK servers prefix "MCP error <code>: "; the client wants the upstream's own words.
    return upstreamOwnError({ ...error.error, message: error.error.message.replace(/^MCP error -?\d+: /, "") });
  }
  if (error instanceof UpstreamFailure) return error.toRpcError();
  if (error instanceof CallStopped) return internalError(`Upstream call stopped: ${error.why}`);
  const message = error instanceof Error ? error.message : String(error);
  return internalError(`Upstream request failed: ${message}`);
}

/** Describes a network error for a person: "connect ECONNREFUSED 127.0.0.1:1". */
export function networkCause(error: unknown): string {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return current.message || code;
    current = current.cause;
  }
  return error instanceof Error ? error.message : String(error);
}
