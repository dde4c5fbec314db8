// Every JSON-RPC error code taskgate emits. Codes follow the 2026-07-28 table (-32020..-32022 are
// MCP's; never invent codes in that range).

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
