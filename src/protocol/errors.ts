// The one error type that carries a JSON-RPC code + HTTP status, and the factories that make every
// error taskgate emits (codes in errorCodes.ts). Errors that name a reason are built from its entry
// in the catalogue (reasons.ts): code, HTTP status and message template; call sites pass values.
// Error objects are made by the factories below only; `JsonRpcErrorObject` is their wire form.

import { ErrorCode, LEGACY_RESOURCE_NOT_FOUND } from "./errorCodes.js";
import { INVENTORY_ERRORS, type InventoryErrorCode, REASONS, type Reason, reasonMessage, type UpstreamReason } from "./reasons.js";
import { type JsonRpcErrorObject, PROTOCOL_VERSION } from "./wire.js";

export { ErrorCode, LEGACY_RESOURCE_NOT_FOUND };

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

/** The legacy door is turned off (legacy.enabled false), or this endpoint has none: the client is
 *  told which version to speak, and (`elsewhere`, a fleet's federated endpoint) the paths that take old clients. */
export const legacyDoorClosed = (requested: string, elsewhere: readonly string[] = []) =>
  new RpcError(
    ErrorCode.UnsupportedProtocolVersion,
    `This server speaks MCP ${PROTOCOL_VERSION} only: legacy sessions (initialize, Mcp-Session-Id; ${requested}) are turned off here. ` +
      `Use a client that speaks ${PROTOCOL_VERSION}` +
      (elsewhere.length > 0 ? `, or point this client at one backend's own path: ${elsewhere.join(", ")}.` : "."),
    { supported: [PROTOCOL_VERSION], requested, ...(elsewhere.length > 0 ? { legacyPaths: [...elsewhere] } : {}) },
    400,
  );

/** An error naming a catalogued reason: its code and status from the catalogue, `data.reason` first. */
function reasonError(reason: Reason, message: string, data: Record<string, unknown> = {}, httpStatus?: number): RpcError {
  const entry = REASONS[reason];
  return new RpcError(entry.code, message, { reason, ...data }, httpStatus ?? entry.httpStatus);
}

/** quotas.requestsPerMinute exceeded (HTTP 429; the caller also gets Retry-After). */
export const tooManyRequests = (retryAfterSeconds: number) =>
  reasonError("rate_limited", reasonMessage("rate_limited", { retryAfterSeconds }), { retryAfterSeconds });

/** A count quota (quotas.maxRunningTasks, quotas.maxHeldCalls) is full: nothing was started (HTTP 429). */
export const quotaExceeded = (quota: string, limit: number, what: string) =>
  reasonError("quota_exceeded", reasonMessage("quota_exceeded", { limit, what, quota }), { quota, limit });

/** This process is shutting down: what it was serving ends, and nothing new starts (HTTP 503). */
export const shuttingDown = () => reasonError("shutting_down", reasonMessage("shutting_down"));

/** A retry reached this instance for a call whose holder instance is gone (and its upstream call with it). */
export const holderGone = () => reasonError("holder_gone", reasonMessage("holder_gone"));

/** The instance holding a task did not take a command (no answer within `ms`, or nobody listening), though its lease
 *  says it runs (HTTP 503). */
export const holderUnresponsive = (taskId: string, command: string, ms: number) =>
  reasonError("holder_unresponsive", reasonMessage("holder_unresponsive", { taskId, command, ms }), { taskId });

/** A retry forwarded to the instance holding its call met silence while that instance's lease lives (HTTP 503): not taken
 *  (nothing was delivered: the call still waits), or taken and then unanswered (the answers may have been delivered). */
export const roundUnresponsive = (taken: boolean, ms: number) => {
  const reason = taken ? "round_unanswered" : "round_not_taken";
  return reasonError(reason, reasonMessage(reason, { ms }));
};

/** The instance holding a task met an unexpected error carrying out a command another instance sent it. */
export const holderFailed = (taskId: string, command: string, cause: string) =>
  reasonError("holder_failed", reasonMessage("holder_failed", { taskId, command, cause }), { taskId });

/** A reload removed (or replaced) the backend that was running this (HTTP 503); `newCall`: a call
 *  that reached it after the reload, refused before it started. */
export const backendRemoved = (backend: string, newCall = false) =>
  reasonError(
    "backend_removed",
    newCall
      ? `backend '${backend}' was removed from the configuration: it takes no new calls (its tasks still answer tasks/get here)`
      : reasonMessage("backend_removed", { backend }),
    { backend },
  );

/** A tool call names a tool the upstream does not list, or one hidden from this caller: the same answer for both. */
export const unknownTool = (name: string) => invalidParams(`Unknown tool: '${name}' is not in the upstream's tools/list`);

/** The caller declined to approve its own call (approver: caller); nothing was sent upstream. */
export const approvalDeclined = (tool: string) => reasonError("approval_declined", reasonMessage("approval_declined", { tool }), { tool });

/** An approver denied the call; `reason` is theirs. */
export const approvalDenied = (tool: string, by: string, reason: string | undefined) =>
  reasonError("approval_denied", reasonMessage("approval_denied", { tool, by, reason: reason ?? "no reason given" }), {
    tool,
    deniedBy: by,
    ...(reason !== undefined ? { deniedFor: reason } : {}),
  });

/** Nobody decided within the rule's expiresAfterMs. */
export const approvalExpired = (tool: string, rule: string, ms: number) =>
  reasonError("approval_expired", reasonMessage("approval_expired", { tool, rule, ms }), { tool, rule });

/** The task store failed or did not answer; `cause` says how (HTTP 503). */
export const storeUnavailable = (cause: string) => reasonError("store_unavailable", reasonMessage("store_unavailable", { cause }));

/** The lease of `holder` (which holds `what`: the task, the call) could not be read: the store's trouble (HTTP 503). */
export const leaseUnreadable = (holder: string, what: string, error: unknown) => {
  const why = error instanceof Error ? error.message : String(error);
  return storeUnavailable(`cannot tell whether instance ${holder}, which holds ${what}, is still running: ${why}`);
};

/** The token could not be judged now (HTTP 503; `message` from authenticate()). */
export const verifierFailure = (reason: "verifier_unavailable" | "verifier_error", message: string) => reasonError(reason, message);

/** A failure talking to the upstream, named by upstream/upstreamFailure.ts (its message, data and status). */
export const upstreamFailureError = (reason: UpstreamReason, message: string, data?: Record<string, unknown>, httpStatus?: number) =>
  reasonError(reason, message, data, httpStatus);

/** A call on a legacy session whose backend moved to 2026-07-28 meanwhile (upstream/backendEra.ts found it). */
export const upstreamEraChanged = (cause: string) =>
  reasonError("upstream_era_changed", `${reasonMessage("upstream_era_changed")} (the old session's call: ${cause})`);

/** The upstream's own JSON-RPC error, in its words; legacy "resource not found" becomes InvalidParams. */
export const upstreamOwnError = (error: JsonRpcErrorObject) =>
  new RpcError(error.code === LEGACY_RESOURCE_NOT_FOUND ? ErrorCode.InvalidParams : error.code, error.message, error.data);

/** An error of the task inventory's HTTP API: `{"error":{"code","message",...extra}}` with the code's HTTP status. */
export class InventoryError extends Error {
  readonly status: number;

  constructor(
    readonly code: InventoryErrorCode,
    message: string,
    /** More fields of the error object (`field` of an answer that does not fit). */
    readonly extra: Record<string, string> = {},
  ) {
    super(message);
    this.name = "InventoryError";
    this.status = INVENTORY_ERRORS[code];
  }

  toJSON(): { error: Record<string, string> } {
    return { error: { code: this.code, message: this.message, ...this.extra } };
  }
}

export const inventoryError = (code: InventoryErrorCode, message: string, extra?: Record<string, string>) =>
  new InventoryError(code, message, extra);

/** A task that is unknown, expired or someone else's: the same answer for all three. */
export const inventoryTaskNotFound = () => inventoryError("task_not_found", "Task not found (unknown, expired, or not yours)");
