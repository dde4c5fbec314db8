// parseEnvelope: validates one 2026-07-28 POST (headers + raw body) in the spec's check order —
// JSON/JSON-RPC shape, required _meta, standard headers, protocol version, known method, params depth — and
// returns the request, a notification to accept (202), or the first RpcError (with the request id
// whenever it could be read). Capability gating and params validation are left to the router.
// classifyLegacy decides which requests go to the legacy (initialize + session) pass-through.

import {
  headerMismatch,
  invalidParams,
  invalidRequest,
  methodNotFound,
  parseError,
  RpcError,
  unsupportedVersion,
} from "../protocol/errors.js";
import { clip, decodeHeaderValue, getHeader, type HeaderMap } from "../protocol/headerValue.js";
import { isLogLevel, LOG_LEVELS } from "../protocol/logLevels.js";
import {
  type ClientCapabilities,
  type JsonObject,
  type JsonRpcRequest,
  META,
  MODERN_METHODS,
  NAME_PARAM,
  PROTOCOL_VERSION,
  type RequestId,
  SUPPORTED_VERSIONS,
} from "../protocol/wire.js";
import { isObject } from "../util/json.js";

export type Envelope =
  | { kind: "request"; request: JsonRpcRequest; capabilities: ClientCapabilities; protocolVersion: string }
  | { kind: "notification"; method: string }
  | { kind: "error"; id: RequestId | null; error: RpcError };

export interface EnvelopeInput {
  /** Lower-cased names as Node gives them (lookup is case-insensitive anyway). */
  headers: HeaderMap;
  body: string;
  /** parseJsonBody(body), when the caller already has it (the body is parsed once per request). */
  parsed?: unknown;
}

type Candidate = { id: RequestId; method: string; params: JsonObject };
type ErrorEnvelope = Extract<Envelope, { kind: "error" }>;

export const LEGACY_VERSIONS = new Set(["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]);

const DISCOVER_HINT = "send server/discover or call methods directly with _meta";
const removed = (method: string, instead: string): [string, string] => [
  method,
  `'${method}' was removed in ${PROTOCOL_VERSION}: ${instead}`,
];
const serverToClient = (method: string): [string, string] => [
  method,
  `'${method}' is not a client-to-server request in ${PROTOCOL_VERSION}: servers ask for it inside input_required results`,
];
const REMOVED_METHODS = new Map<string, string>([
  removed("initialize", `${DISCOVER_HINT} (supported versions: ${SUPPORTED_VERSIONS.join(", ")})`),
  removed("ping", DISCOVER_HINT),
  removed("logging/setLevel", `set _meta '${META.logLevel}' on each request instead`),
  removed("resources/subscribe", "use subscriptions/listen with notifications.resourceSubscriptions"),
  removed("resources/unsubscribe", "close the subscriptions/listen stream instead"),
  ["tasks/result", "'tasks/result' was removed from the tasks extension: tasks/get returns the result inline"],
  ["tasks/list", "'tasks/list' does not exist in the tasks extension"],
  serverToClient("roots/list"),
  serverToClient("sampling/createMessage"),
  serverToClient("elicitation/create"),
]);

export function parseEnvelope(input: EnvelopeInput): Envelope {
  const parsed = "parsed" in input ? input.parsed : parseJsonBody(input.body);
  if (parsed instanceof RpcError) return fail(null, parsed);
  const shaped = readShape(parsed);
  if ("kind" in shaped) return shaped;
  const { id, method, params } = shaped;
  const metaError = checkMeta(params);
  if (metaError) return fail(id, metaError);
  const meta = params._meta as JsonObject;
  const version = meta[META.protocolVersion] as string;
  const error = checkHeaders(input.headers, method, params, version) ?? checkVersion(version) ?? checkMethod(method) ?? checkDepth(params);
  if (error) return fail(id, error);
  const request: JsonRpcRequest = { jsonrpc: "2.0", id, method, params: params as JsonRpcRequest["params"] };
  return { kind: "request", request, capabilities: meta[META.clientCapabilities] as ClientCapabilities, protocolVersion: version };
}

// ---- 1. JSON and JSON-RPC shape -------------------------------------------------------------

/** The body's JSON value, or the -32700 RpcError when it is not JSON. */
export function parseJsonBody(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return parseError("Parse error: the request body is not valid JSON");
  }
}

function readShape(message: unknown): Candidate | Envelope {
  if (Array.isArray(message)) {
    const why = `JSON-RPC batching does not exist in ${PROTOCOL_VERSION}`;
    return refuse(null, `${why}: POST exactly one request or notification per HTTP request`);
  }
  if (!isObject(message)) return refuse(null, "Invalid request: the body must be a JSON-RPC request object");
  const id = readableId(message.id);
  const problem = shapeProblem(message);
  if (problem) return refuse(id, problem);
  const method = message.method as string;
  const params = (message.params ?? {}) as JsonObject;
  if (!("id" in message)) return notificationOrError(method);
  if (id === null) return refuse(null, "Invalid request: 'id' must be a string or an integer (null is not allowed)");
  return { id, method, params };
}

function shapeProblem(message: JsonObject): string | undefined {
  if ("result" in message || "error" in message) return "Invalid request: clients must not POST JSON-RPC responses";
  if (message.jsonrpc !== "2.0") return "Invalid request: 'jsonrpc' must be \"2.0\"";
  if (typeof message.method !== "string") return "Invalid request: 'method' must be a string";
  if ("params" in message && !isObject(message.params)) return "Invalid request: 'params' must be an object";
  return undefined;
}

function notificationOrError(method: string): Envelope {
  if (method.startsWith("notifications/")) return { kind: "notification", method };
  return refuse(null, `Invalid request: '${clip(method)}' is not a notification, so it needs an 'id'`);
}

function readableId(id: unknown): RequestId | null {
  if (typeof id === "string") return id;
  return typeof id === "number" && Number.isSafeInteger(id) ? id : null;
}

// ---- 2. required _meta -----------------------------------------------------------------------

function checkMeta(params: JsonObject): RpcError | undefined {
  const meta = params._meta;
  const required = [META.protocolVersion, META.clientCapabilities];
  if (meta === undefined) return metaError(`Missing required params._meta (it must carry ${quoteAll(required)})`);
  if (!isObject(meta)) return metaError("Invalid params._meta: it must be an object");
  const missing = required.filter((key) => meta[key] === undefined);
  if (missing.length > 0) return metaError(`Missing required _meta ${missing.length > 1 ? "keys" : "key"} ${quoteAll(missing)}`);
  if (typeof meta[META.protocolVersion] !== "string") return metaError(`Invalid _meta '${META.protocolVersion}': it must be a string`);
  if (!isObject(meta[META.clientCapabilities])) return metaError(`Invalid _meta '${META.clientCapabilities}': it must be an object`);
  return checkLogLevel(meta[META.logLevel]);
}

function checkLogLevel(level: unknown): RpcError | undefined {
  if (level === undefined || isLogLevel(level)) return undefined;
  const shown = clip(JSON.stringify(level) ?? String(level));
  return metaError(`Invalid _meta '${META.logLevel}': ${shown} is not one of ${LOG_LEVELS.join(", ")}`);
}

const metaError = (message: string) => invalidParams(message, undefined, 400);
const quoteAll = (keys: string[]) => keys.map((k) => `'${k}'`).join(", ");

// ---- 3. standard headers ---------------------------------------------------------------------

function checkHeaders(headers: HeaderMap, method: string, params: JsonObject, version: string): RpcError | undefined {
  return (
    compareHeader(headers, "MCP-Protocol-Version", version, true) ??
    compareHeader(headers, "Mcp-Method", method, true) ??
    checkNameHeader(headers, method, params)
  );
}

function checkNameHeader(headers: HeaderMap, method: string, params: JsonObject): RpcError | undefined {
  const paramName = Object.hasOwn(NAME_PARAM, method) ? NAME_PARAM[method] : undefined;
  if (paramName === undefined) return undefined;
  // Deliberate relaxation: tasks/* may omit Mcp-Name (the spec's own tutorial polls without it).
  const required = !method.startsWith("tasks/");
  return compareHeader(headers, "Mcp-Name", params[paramName], required, `params.${paramName}`);
}

function compareHeader(headers: HeaderMap, name: string, body: unknown, required: boolean, field?: string): RpcError | undefined {
  const raw = getHeader(headers, name);
  if (raw === undefined) {
    return required ? headerMismatch(`Missing required header ${name} (expected ${describe(body, field)})`) : undefined;
  }
  if (Array.isArray(raw)) return headerMismatch(`Invalid header ${name}: sent ${raw.length} times, send it exactly once`);
  const decoded = decodeHeaderValue(raw);
  if (!decoded.ok) return headerMismatch(`Invalid header ${name} value '${clip(raw)}': ${decoded.reason}`);
  if (sameValue(decoded.value, body)) return undefined;
  const shown = clip(decoded.value);
  return headerMismatch(`Header mismatch: ${name} header value '${shown}' does not match body value ${describe(body, field)}`);
}

/** Strings compare exactly (case-sensitive); integer params compare numerically. */
function sameValue(header: string, body: unknown): boolean {
  if (typeof body === "string") return header === body;
  return typeof body === "number" && /^-?\d+$/.test(header) && Number(header) === body;
}

function describe(body: unknown, field = "the body value"): string {
  if (typeof body === "string") return `'${clip(body)}'`;
  if (typeof body === "number") return `'${body}'`;
  return body === undefined ? `(${field} is absent)` : `(${field} is not a string)`;
}

// ---- 4. protocol version, 5. method ----------------------------------------------------------

function checkVersion(version: string): RpcError | undefined {
  if ((SUPPORTED_VERSIONS as readonly string[]).includes(version)) return undefined;
  return unsupportedVersion(version, SUPPORTED_VERSIONS, clip(version));
}

function checkMethod(method: string): RpcError | undefined {
  if (MODERN_METHODS.has(method)) return undefined;
  const removed = REMOVED_METHODS.get(method);
  return removed ? methodNotFound(removed, "") : methodNotFound(clip(method));
}

// ---- 7. params: nesting depth ------------------------------------------------------------------

/** Deeper params are refused before any work (recursive code below would blow its stack). */
export const MAX_PARAMS_DEPTH = 128;

function checkDepth(params: JsonObject): RpcError | undefined {
  // Iterative, so the check itself cannot overflow.
  const stack: Array<[unknown, number]> = [[params, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (depth > MAX_PARAMS_DEPTH) return invalidParams(`Invalid params: nested more than ${MAX_PARAMS_DEPTH} levels deep`);
    if (typeof value !== "object" || value === null) continue;
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
    }
  }
  return undefined;
}

// ---- helpers -----------------------------------------------------------------------------------

function fail(id: RequestId | null, error: RpcError): ErrorEnvelope {
  return { kind: "error", id, error };
}

function refuse(id: RequestId | null, message: string): ErrorEnvelope {
  return fail(id, invalidRequest(message));
}

// ---- dual-era classification (§10) -------------------------------------------------------------

export interface LegacyClassifyInput {
  /** HTTP method: "POST" | "GET" | "DELETE" | anything else. */
  method: string;
  headers: HeaderMap;
  /** The parsed JSON body (undefined when there is none or it did not parse), asked only when the
   *  headers do not decide: a request on a known legacy session is passed on unparsed. */
  body: () => unknown;
  isKnownLegacySession: (id: string) => boolean;
}

/**
 * True when the request belongs to the legacy pass-through: a known legacy Mcp-Session-Id; a
 * GET/DELETE carrying any Mcp-Session-Id; an
 * `initialize` without modern `_meta` protocolVersion; or a POST without modern `_meta` whose
 * MCP-Protocol-Version header is absent or names a legacy version (so a legacy client with an
 * expired session reaches the legacy path and gets its 404 ⇒ re-initialize). Else false.
 */
export function classifyLegacy(input: LegacyClassifyInput): boolean {
  const session = getHeader(input.headers, "mcp-session-id");
  if (typeof session === "string" && input.isKnownLegacySession(session.trim())) return true;
  // 2026-07-28 has no GET/DELETE at all: one carrying a session id is a legacy client's, even for a
  // session this process never saw (e.g. after a restart); the upstream answers 404 if it is gone.
  if (input.method.toUpperCase() !== "POST") return typeof session === "string" && session.trim() !== "";
  const body = input.body();
  const message = isObject(body) ? body : undefined;
  const meta = isObject(message?.params) && isObject(message.params._meta) ? message.params._meta : {};
  if (message?.method === "initialize" && meta[META.protocolVersion] === undefined) return true;
  if (meta[META.protocolVersion] !== undefined || meta[META.clientCapabilities] !== undefined) return false;
  const version = getHeader(input.headers, "mcp-protocol-version");
  return version === undefined || (typeof version === "string" && LEGACY_VERSIONS.has(version.trim()));
}
