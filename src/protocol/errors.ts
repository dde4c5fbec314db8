// Every JSON-RPC error code taskgate emits, and the one error type that carries code + HTTP status.
// Codes follow the 2026-07-28 table (-32020..-32022 are MCP's; never invent codes in that range).

export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
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

  toJSON(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

export const invalidParams = (message: string, data?: unknown, httpStatus = 200) =>
  new RpcError(ErrorCode.InvalidParams, message, data, httpStatus);

export const headerMismatch = (message: string) => new RpcError(ErrorCode.HeaderMismatch, message, undefined, 400);

export const methodNotFound = (method: string, why = "is not a 2026-07-28 method this server offers") =>
  new RpcError(ErrorCode.MethodNotFound, `Method not found: ${method} ${why}`, undefined, 404);

export const missingCapability = (requiredCapabilities: Record<string, unknown>, what: string) =>
  new RpcError(
    ErrorCode.MissingRequiredClientCapability,
    `Missing required client capability: ${what}`,
    { requiredCapabilities },
    400,
  );
