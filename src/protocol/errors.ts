// Every JSON-RPC error code taskgate emits, and the one error type that carries code + HTTP status.
// Codes follow the 2026-07-28 table (-32020..-32022 are MCP's; never invent codes in that range).
// Error objects are made by the factories below only; `JsonRpcErrorObject` is their wire form.

import { type JsonRpcErrorObject, PROTOCOL_VERSION } from "./wire.js";

export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** LSP's "request cancelled": what the upstream hears when a question it asked is withdrawn. */
  RequestCancelled: -32800,
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
} as const;

/** Legacy "resource not found"; MUST NOT be emitted in 2026, translated to InvalidParams. */
export const LEGACY_RESOURCE_NOT_FOUND = -32002;

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
    /** HTTP status of the response that carries this error (200 when the spec names none). */
    readonly httpStatus = 200,
  ) {
    super(message);
    this.name = "RpcError";
  }

  /** An error received in wire form (from the upstream or another instance). */
  static from(error: JsonRpcErrorObject, httpStatus = 200): RpcError {
    return new RpcError(error.code, error.message, error.data, httpStatus);
  }

  toJSON(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

export const parseError = (message: string) => new RpcError(ErrorCode.ParseError, message, undefined, 400);

export const invalidRequest = (message: string, httpStatus = 400) => new RpcError(ErrorCode.InvalidRequest, message, undefined, httpStatus);

export const invalidParams = (message: string, data?: unknown, httpStatus = 200) =>
  new RpcError(ErrorCode.InvalidParams, message, data, httpStatus);

export const internalError = (message: string, data?: unknown, httpStatus = 200) =>
  new RpcError(ErrorCode.InternalError, message, data, httpStatus);

export const requestCancelled = (message = "Request cancelled") => new RpcError(ErrorCode.RequestCancelled, message);

export const headerMismatch = (message: string) => new RpcError(ErrorCode.HeaderMismatch, message, undefined, 400);

/** `why` follows the method name ("" for none). */
export const methodNotFound = (method: string, why = "is not a 2026-07-28 method this server offers") =>
  new RpcError(ErrorCode.MethodNotFound, `Method not found: ${method}${why ? ` ${why}` : ""}`, undefined, 404);

export const missingCapability = (requiredCapabilities: Record<string, unknown>, what: string) =>
  new RpcError(ErrorCode.MissingRequiredClientCapability, `Missing required client capability: ${what}`, { requiredCapabilities }, 400);

export const unsupportedVersion = (requested: string, supported: readonly string[], shown = requested) =>
  new RpcError(
    ErrorCode.UnsupportedProtocolVersion,
    `Unsupported protocol version '${shown}' (supported: ${supported.join(", ")})`,
    { supported: [...supported], requested },
    400,
  );

/** The legacy door is turned off (legacy.enabled false): the client is told which version to speak. */
export const legacyDoorClosed = (requested: string) =>
  new RpcError(
    ErrorCode.UnsupportedProtocolVersion,
    `This server speaks MCP ${PROTOCOL_VERSION} only: legacy sessions (initialize, Mcp-Session-Id; ${requested}) are turned off here. Use a client that speaks ${PROTOCOL_VERSION}.`,
    { supported: [PROTOCOL_VERSION], requested },
    400,
  );

/** quotas.requestsPerMinute exceeded (HTTP 429; the caller also gets Retry-After). */
export const tooManyRequests = (retryAfterSeconds: number) =>
  new RpcError(
    ErrorCode.InternalError,
    `Too many requests: this identity is over its request rate (quotas.requestsPerMinute); retry in ${retryAfterSeconds} s`,
    { reason: "rate_limited", retryAfterSeconds },
    429,
  );

/** A count quota (quotas.maxRunningTasks, quotas.maxHeldCalls) is full: nothing was started (HTTP 429). */
export const quotaExceeded = (quota: string, limit: number, what: string) =>
  new RpcError(
    ErrorCode.InternalError,
    `Quota exceeded: this identity already has ${limit} ${what} (${quota}); wait for one to finish, or cancel one`,
    { reason: "quota_exceeded", quota, limit },
    429,
  );
