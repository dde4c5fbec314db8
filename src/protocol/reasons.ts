// The catalogue of reasons, in the style of fastify's lib/errors.js: every `error.data.reason` a
// client can receive, with its JSON-RPC code, HTTP status, the requests_total outcome it counts
// under and its message template (`<name>` marks a value the call site passes); every outcome of
// requests_total; every shutdown message. errors.ts builds errors from these entries, and metrics
// and request outcomes take their label sets from here, so a reason or an outcome that is not in
// this file does not compile where it is counted.

import { ErrorCode } from "./errorCodes.js";

/** What became of one request to the MCP endpoint: the `outcome` label of requests_total. */
export const REQUEST_OUTCOMES = {
  ok: "a result (or a notification's 202, a listen stream that ran until the client closed it, a legacy request answered below 400)",
  tool_error: "the tool's own result with isError",
  input_required: "an MRTR round (the client is asked; it retries with the answers)",
  task: "tools/call answered with a task",
  error: "a JSON-RPC error reply (bad params, unknown tool, the upstream's own error…)",
  rejected: "refused at the door (Host/Origin, body size, HTTP method, token, envelope, request rate)",
  failed: "HTTP 5xx, or a reason that names upstream or store trouble or a shutdown: the request could not be served",
  disconnected: "the client went away before its reply was written",
} as const;
export type RequestOutcome = keyof typeof REQUEST_OUTCOMES;

interface ReasonEntry {
  code: number;
  httpStatus: number;
  /** The requests_total outcome of a reply carrying this reason, however it was written (JSON or a stream's last frame). */
  outcome: RequestOutcome;
  /** The client's message; `<name>` is a value the call site passes. */
  message: string;
}

const internal = (httpStatus: number, message: string, outcome: RequestOutcome = "failed"): ReasonEntry => ({
  code: ErrorCode.InternalError,
  httpStatus,
  outcome,
  message,
});

/** The failures of talking to the upstream (upstream/upstreamFailure.ts names each one it raises). */
const UPSTREAM = {
  upstream_unreachable: internal(502, "Upstream unreachable at <url>: <cause> (or: Upstream server could not be started …)"),
  upstream_not_mcp: internal(502, "Upstream at <url> is not an MCP endpoint: <what it answered>"),
  upstream_auth: internal(502, "the upstream refused our credentials (HTTP <status>) on <method>: <what to check>"),
  upstream_timeout: internal(504, "Upstream timed out: no answer to <method> within <ms> ms (<option>)"),
  upstream_unresponsive: internal(504, "Upstream stopped answering: <why>"),
  upstream_lost: internal(502, "Upstream call lost: <why>"),
  upstream_exited: internal(502, "Upstream server process <pid> exited with code <code> (or was killed by <signal>)…"),
  upstream_sessions_exhausted: internal(503, "taskgate holds upstream.maxSessions (<limit>) upstream sessions, all in use"),
  upstream_era_changed: internal(
    502,
    "the backend moved from the session protocol to 2026-07-28 while this ran; " +
      "the call it had on its old session ended with it: call again",
  ),
  session_gone: internal(502, "the upstream no longer knows session <id> (HTTP <status>)"),
  shutting_down: internal(503, "taskgate is shutting down"),
} as const satisfies Record<string, ReasonEntry>;

/** A call that needed approval and did not get it (access/approvalGate.ts): nothing was sent upstream. */
const refused = (message: string): ReasonEntry => ({ code: ErrorCode.InvalidRequest, httpStatus: 200, outcome: "error", message });
const APPROVALS = {
  approval_declined: refused("the call of '<tool>' was not sent: you declined to approve it"),
  approval_denied: refused("the call of '<tool>' was not sent: <by> denied approval (<reason>)"),
  approval_expired: refused("the call of '<tool>' was not sent: nobody approved it within <ms> ms (<rule>.expiresAfterMs)"),
} as const satisfies Record<string, ReasonEntry>;

export const REASONS = {
  ...UPSTREAM,
  store_unavailable: internal(503, "Task store unavailable: <cause>"),
  holder_gone: {
    code: ErrorCode.InvalidParams,
    httpStatus: 200,
    outcome: "error",
    message:
      "the call this requestState refers to is gone: the taskgate instance holding it stopped or does not answer, " +
      "and its upstream call went with it; call again",
  },
  holder_unresponsive: internal(
    503,
    "the taskgate instance holding task <taskId> did not take <command> (no answer within <ms> ms, or not listening), " +
      "yet its lease says it still runs (paused, overloaded, or stopped less than a lease ago): the task is unchanged, " +
      "and <command> may still reach it; read the task before sending it again",
  ),
  round_not_taken: internal(
    503,
    "the taskgate instance holding this call did not take the retry (no answer within <ms> ms), yet its lease says it " +
      "still runs (paused or overloaded): the call was not resumed and still waits for these answers; send this same request again",
  ),
  round_unanswered: internal(
    503,
    "the taskgate instance holding this call took the retry, then said nothing for <ms> ms, yet its lease says it still " +
      "runs: the answers may have reached the call, but its result cannot come on this request; send this same request " +
      "again (it is refused with -32602 if they did)",
  ),
  holder_failed: internal(
    500,
    "the taskgate instance holding task <taskId> could not carry out <command>: <cause> (the task is unchanged unless it says so)",
  ),
  quota_exceeded: internal(
    429,
    "Quota exceeded: this identity already has <limit> <what> (<quota>); wait for one to finish, or cancel one",
    "error",
  ),
  rate_limited: internal(
    429,
    "Too many requests: this identity is over its request rate (quotas.requestsPerMinute); retry in <retryAfterSeconds> s",
    "rejected",
  ),
  verifier_unavailable: internal(
    503,
    "taskgate cannot verify access tokens right now (its identity provider's keys are unreachable): try again shortly",
  ),
  verifier_error: internal(503, "taskgate could not check the token: try again later"),
  backend_removed: internal(
    503,
    "backend '<backend>' was removed from (or changed in) the configuration while this ran; its calls were stopped after reload.drainMs",
  ),
  ...APPROVALS,
} as const satisfies Record<string, ReasonEntry>;

export type Reason = keyof typeof REASONS;
export type UpstreamReason = keyof typeof UPSTREAM;
export const ALL_REASONS = Object.keys(REASONS) as Reason[];
export const UPSTREAM_REASONS = Object.keys(UPSTREAM) as UpstreamReason[];

export const isReason = (value: unknown): value is Reason => typeof value === "string" && Object.hasOwn(REASONS, value);

/** The message of `reason` with its `<name>` places filled from `values`. */
export function reasonMessage(reason: Reason, values: Record<string, string | number> = {}): string {
  return REASONS[reason].message.replace(/<(\w+)>/g, (place, name: string) => (Object.hasOwn(values, name) ? String(values[name]) : place));
}

/** The error codes of the task inventory's HTTP API (`{"error":{"code","message"}}`), with their HTTP status. */
export const INVENTORY_ERRORS = {
  bad_request: 400,
  invalid_cursor: 400,
  body_too_large: 413,
  unauthenticated: 401,
  forbidden: 403,
  not_operator: 403,
  task_not_found: 404,
  not_found: 404,
  wrong_state: 409,
  unknown_input_key: 409,
  invalid_answer: 422,
  rate_limited: 429,
  unavailable: 503,
} as const satisfies Record<string, number>;
export type InventoryErrorCode = keyof typeof INVENTORY_ERRORS;

/** Words of a shutdown: what a client, a task record and an upstream call are told. */
export const SHUTDOWN = {
  /** Why an upstream call is stopped at shutdown (logged, and the cancelled call's reason). */
  abortReason: "gateway shutting down",
  /** A live task's failure when this process shuts down. */
  taskFailed: "taskgate shut down while holding this task; its upstream call was stopped",
  /** A task left running in a persistent store by a process that died. */
  taskOrphaned: "taskgate restarted while holding this task; its upstream call was lost",
  /** A task whose holder instance is gone. */
  holderGone: "the taskgate instance holding this task is gone; its upstream call was lost",
} as const;
