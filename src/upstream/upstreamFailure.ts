// UpstreamFailure: every way talking to the upstream can fail, each with the cause a person can act
// on, the HTTP status a proxy would answer (502 bad gateway, 503 unavailable, 504 timeout) and a
// machine word in error.data.reason. toClientError() turns whatever an upstream request threw into
// the JSON-RPC error a 2026-07-28 client gets: an upstream's own JSON-RPC error keeps its code
// (legacy -32002 becomes -32602); our failures are -32603 with their reason.

import { ErrorCode, LEGACY_RESOURCE_NOT_FOUND, RpcError } from "../protocol/errors.js";
import type { JsonRpcErrorObject } from "../protocol/wire.js";

export type FailureReason =
  | "upstream_unreachable"
  | "upstream_not_mcp"
  | "upstream_auth"
  | "upstream_timeout"
  | "upstream_unresponsive"
  | "upstream_lost"
  | "upstream_exited"
  | "upstream_sessions_exhausted"
  | "session_gone"
  | "shutting_down";

const STATUS: Record<FailureReason, number> = {
  upstream_unreachable: 502,
  upstream_not_mcp: 502,
  upstream_auth: 502,
  upstream_timeout: 504,
  upstream_unresponsive: 504,
  upstream_lost: 502,
  upstream_exited: 502,
  upstream_sessions_exhausted: 503,
  session_gone: 502,
  shutting_down: 503,
};

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
    this.httpStatus = options?.httpStatus ?? STATUS[reason];
    if (options?.data) this.data = options.data;
  }

  toRpcError(): RpcError {
    return new RpcError(ErrorCode.InternalError, this.message, { reason: this.reason, ...this.data }, this.httpStatus);
  }
}

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
    const { code, message, data } = error.error;
    // SDK servers prefix "MCP error <code>: "; the client wants the upstream's own words.
    const words = message.replace(/^MCP error -?\d+: /, "");
    return new RpcError(code === LEGACY_RESOURCE_NOT_FOUND ? ErrorCode.InvalidParams : code, words, data);
  }
  if (error instanceof UpstreamFailure) return error.toRpcError();
  if (error instanceof CallStopped) return new RpcError(ErrorCode.InternalError, `Upstream call stopped: ${error.why}`);
  const message = error instanceof Error ? error.message : String(error);
  return new RpcError(ErrorCode.InternalError, `Upstream request failed: ${message}`);
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
