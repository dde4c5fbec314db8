// The one MCP endpoint. Every request: its request id (X-Request-Id, traceparent or minted; echoed
// as X-Request-Id), Origin/Host check, body read (size-limited), then the legacy pass-through for
// legacy-shaped requests, 405 for GET/DELETE without a legacy session, and for modern POSTs:
// authenticate() (bearer identity, RFC 6750 challenges), envelope checks in the spec's order, the
// method router, and the reply written by writeReply. One log line per request says what happened
// to it (every line of the request carries its requestId), and the metrics count it by method and
// outcome.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { type AuthenticateResult, authenticate } from "../auth/authenticate.js";
import { type Identity, type IdentityResolver, loggableSubject, ownerHashOf } from "../auth/identity.js";
import type { MethodRequest } from "../methods/handler.js";
import type { MethodRouter } from "../methods/router.js";
import { requestLog } from "../observability/requestLog.js";
import { endRequestSpan, startRequestSpan } from "../observability/requestSpan.js";
import { traceIdsOf, tracingOn, withSpan } from "../observability/tracing.js";
import { internalError, invalidRequest, legacyDoorClosed, RpcError, tooManyRequests, verifierFailure } from "../protocol/errors.js";
import type { Reason } from "../protocol/reasons.js";
import { errorMessage, errorReply, type Reply } from "../protocol/reply.js";
import type { RequestNote } from "../protocol/requestNote.js";
import type { ClientCapabilities, JsonObject, JsonRpcRequest, RequestId } from "../protocol/wire.js";
import { ClientGone } from "../util/clientGone.js";
import { type DistinctHeaders, distinctHeaders } from "./distinctHeaders.js";
import { classifyLegacy, parseEnvelope, parseJsonBody } from "./envelope.js";
import { sendError, sendJson } from "./jsonResponse.js";
import { checkOriginAndHost } from "./originGuard.js";
import type { LegacyCaller, PassThrough } from "./passThrough.js";
import { BodyTooLargeError, readBody } from "./readBody.js";
import { writeReply } from "./replyWriter.js";
import { requestIdOf } from "./requestId.js";
import { RequestIdResponse } from "./requestIdResponse.js";
import { methodLabel, type RequestOutcome, repliedReason, requestOutcome } from "./requestOutcome.js";
import type { RequestRate } from "./requestRate.js";

/** Told about every request once its response ended. */
export interface RequestObserver {
  requestDone(method: string, outcome: RequestOutcome, seconds: number, reason?: Reason): void;
}

export interface FrontDoorOptions {
  identity: IdentityResolver;
  /** Scopes every modern request's token must carry (auth.requiredScopes). */
  requiredScopes: readonly string[];
  /** The Protected Resource Metadata URL for this request's challenges, when taskgate publishes one. */
  resourceMetadataUrl?: (req: IncomingMessage) => string;
  router: Pick<MethodRouter, "dispatch">;
  passThrough: PassThrough;
  /** In a fleet: the MCP path this door serves (tasks made here answer only here). */
  endpoint?: string;
  /** The legacy door: `enabled` false refuses legacy requests; `authenticate` runs the same bearer
   *  check as the modern door (legacy.auth required, auth.mode not demo). */
  /** requiredScopes: the legacy door's own (legacy.requiredScopes); unset = the modern door's. */
  legacy: {
    enabled: boolean;
    authenticate: boolean;
    requiredScopes?: readonly string[];
    /** Read per request: the door is closed now (the upstream has access rules or approvals a pass-through cannot apply). */
    closed?: () => boolean;
    /** Read per request: the paths whose legacy doors are open, named to an old client this door refuses (a federated endpoint). */
    elsewhere?: () => readonly string[];
  };
  /** quotas.requestsPerMinute, per identity, on both doors. */
  rate?: RequestRate;
  /** Told who each authenticated request is from and the Authorization it carried (upstream credentials). */
  onIdentified?(identity: Identity, owner: string, authorization: string | undefined): void;
  log: Logger;
  allowedOrigins: string[];
  allowedHosts: string[];
  bodyLimitBytes: number;
  /** Keep-alive comment interval of SSE replies. */
  keepAliveMs: number;
  metrics?: RequestObserver;
}

function idOf(body: unknown): RequestId | null {
  const id = (body as { id?: unknown } | undefined)?.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

/** The version a legacy request speaks: its initialize's protocolVersion, else its header. */
function legacyVersionOf(header: string | string[] | undefined, body: unknown): string {
  const params = (body as { method?: unknown; params?: { protocolVersion?: unknown } } | undefined)?.params;
  if (typeof params?.protocolVersion === "string") return params.protocolVersion.slice(0, 40);
  return typeof header === "string" ? header.slice(0, 40) : "2025-11-25 or older";
}

/** One request at the door: what every step reads, and the note they write. */
interface Visit {
  req: IncomingMessage;
  res: ServerResponse;
  note: RequestNote;
  requestId: string;
  /** The headers read with every value they were sent with (one pass over the raw headers). */
  distinct: DistinctHeaders;
  options: FrontDoorOptions;
  /** Run first when the response closes (the modern request's own teardown: one close listener per request). */
  onClose?: () => void;
}

/** The endpoint's handler: synchronous up to the method's reply (a body read, a token judged by a resolver that
 *  must wait, and the reply itself are the only waits); a crash is thrown or rejected to the caller. */
export function frontDoor(options: FrontDoorOptions) {
  return (req: IncomingMessage, res: ServerResponse): void | Promise<void> => {
    const visit = arrive(req, res, options);
    const { note } = visit;
    const forbidden = checkOriginAndHost(req.headers, { origins: options.allowedOrigins, hosts: options.allowedHosts });
    if (forbidden) {
      // The most likely deployment mistake (a proxy's or service's name not in allowedHosts): say which value was refused.
      note.rejected = forbidden.header === "Host" ? "host_not_allowed" : "origin_not_allowed";
      note.refusedValue = forbidden.value;
      return sendError(res, null, forbidden.error);
    }
    if (req.method !== "POST") return afterBody(visit, undefined);
    return new Promise<void>((resolve, reject) => {
      readBody(req, options.bodyLimitBytes, (error, body) => {
        try {
          const served = error ? refuseBody(visit, error) : afterBody(visit, body);
          if (served) served.then(resolve, reject);
          else resolve();
        } catch (crash) {
          reject(crash);
        }
      });
    });
  };
}

/** One pass over the read request: legacy or not, then the bearer check, the envelope, and the method. */
function afterBody(visit: Visit, body: Buffer | undefined): void | Promise<void> {
  const { req, res, note, options } = visit;
  const read = readOnce(body);
  const legacy = classifyLegacy({
    method: req.method ?? "",
    headers: req.headers,
    body: read.json,
    isKnownLegacySession: (id) => options.passThrough.isKnownSession(id),
  });
  if (legacy) return serveLegacy(visit, body, read.json);
  if (req.method !== "POST") {
    note.rejected = "method_not_allowed";
    const error = invalidRequest(`${req.method} is not allowed: 2026-07-28 uses POST only (GET/DELETE serve legacy sessions only)`, 405);
    return sendJson(res, 405, errorMessage(null, error), { Allow: "POST" });
  }
  const modern = (known: Caller | undefined): void | Promise<void> => {
    if (!known) return;
    const envelope = parseEnvelope({ headers: req.headers, body: read.text(), parsed: read.parsed() });
    if (envelope.kind === "error") {
      note.rejected = envelope.error.code;
      note.detail = envelope.error.message;
      return sendError(res, envelope.id, envelope.error);
    }
    if (envelope.kind === "notification") {
      note.notification = envelope.method;
      res.writeHead(202).end();
      return;
    }
    return serveModern(visit, envelope.request, envelope.capabilities, known);
  };
  const known = identify(visit, read.json, options.requiredScopes);
  return known instanceof Promise ? known.then(modern) : modern(known);
}

/** A request's body as text and as JSON, each made at most once and only when a step asks for it. */
interface ReadOnce {
  text(): string;
  /** The parsed body, or the parse error's RpcError. */
  parsed(): unknown;
  /** The parsed body, undefined when it is not JSON. */
  json(): unknown;
}

function readOnce(body: Buffer | undefined): ReadOnce {
  let text: string | undefined;
  let parsed: unknown;
  let isParsed = false;
  const read: ReadOnce = {
    text: () => (text ??= body?.toString("utf8") ?? ""),
    parsed() {
      if (!isParsed) {
        parsed = parseJsonBody(read.text());
        isParsed = true;
      }
      return parsed;
    },
    json() {
      const value = read.parsed();
      return value instanceof RpcError ? undefined : value;
    },
  };
  return read;
}

/** The request's id (echoed), and its one log line and count once its response ended. */
function arrive(req: IncomingMessage, res: ServerResponse, options: FrontDoorOptions): Visit {
  const { log } = options;
  const started = performance.now();
  const note: RequestNote = {};
  const distinct = distinctHeaders(req.rawHeaders);
  const { id: requestId, refused } = requestIdOf(distinct);
  if (refused) note.requestIdRefused = refused;
  // Written with the status line by the endpoint's own responses; set ahead on any other (an embedding's server).
  if (res instanceof RequestIdResponse) res.requestId = requestId;
  else res.setHeader("X-Request-Id", requestId);
  const visit: Visit = { req, res, note, requestId, distinct, options };
  res.on("close", () => {
    const ms = performance.now() - started;
    const finished = res.writableFinished;
    // Closed before its status line was sent: res.statusCode (200 by default) is not what the client got.
    const unanswered = !res.headersSent;
    // Once the reply writer has handled the close too: a call the client left notes that first.
    setImmediate(() => {
      const outcome = requestOutcome(note, res.statusCode, finished);
      options.metrics?.requestDone(methodLabel(note), outcome, ms / 1000, repliedReason(note));
      // No work for a line that would not be written (info is off and nothing failed).
      if (res.statusCode < 500 && !log.isLevelEnabled("info")) return;
      const line = {
        event: "request",
        requestId,
        httpMethod: req.method,
        status: res.statusCode,
        ms: Math.round(ms),
        ...note,
        ...(unanswered ? { unanswered } : {}),
      };
      // An expected failure (upstream or store trouble, named by its reason) is a warning; anything else at 5xx is an error.
      if (res.statusCode >= 500) note.reason ? log.warn(line, "request failed") : log.error(line, "request failed");
      else log.info(line, "request");
    });
    visit.onClose?.(); // after the line is scheduled, as a listener of its own would run
  });
  return visit;
}

/** A POST's body could not be read: too large is refused (413); anything else (the request broke) is thrown on. */
function refuseBody({ res, note }: Visit, error: Error): void {
  if (!(error instanceof BodyTooLargeError)) throw error;
  note.rejected = "body_too_large";
  sendError(res, null, invalidRequest(error.message, 413), { Connection: "close" });
}

/** Who a request is from: its identity and the owner hash tasks are kept under. */
interface Caller {
  identity: Identity;
  owner: string;
}

/** The caller's identity (bearer check, then the request rate), or undefined once the refusal is sent; at once when the
 *  resolver answers at once. */
function identify(visit: Visit, json: () => unknown, requiredScopes: readonly string[]): Caller | undefined | Promise<Caller | undefined> {
  const { req, options } = visit;
  const auth = authenticate({
    authorization: visit.distinct.authorization,
    resolver: options.identity,
    requiredScopes,
    ...(options.resourceMetadataUrl ? { resourceMetadataUrl: options.resourceMetadataUrl(req) } : {}),
  });
  return auth instanceof Promise ? auth.then((judged) => admitted(visit, json, judged)) : admitted(visit, json, auth);
}

/** The bearer check's verdict, then the request rate: the caller, or undefined once the refusal is sent. */
function admitted(visit: Visit, json: () => unknown, auth: AuthenticateResult): Caller | undefined {
  const { req, res, note, options } = visit;
  if (!auth.ok) {
    note.rejected = auth.reason;
    if (auth.detail) note.detail = auth.detail;
    const error =
      auth.reason === "verifier_unavailable" || auth.reason === "verifier_error"
        ? verifierFailure(auth.reason, auth.message)
        : invalidRequest(auth.message, auth.status);
    sendError(res, idOf(json()), error, auth.wwwAuthenticate ? { "WWW-Authenticate": auth.wwwAuthenticate } : {});
    return undefined;
  }
  const { identity } = auth;
  const owner = ownerHashOf(identity);
  note.subject = loggableSubject(identity, options.identity.mode);
  const rate = options.rate?.take(owner);
  if (rate && !rate.ok) {
    note.rejected = "rate_limited";
    sendError(res, idOf(json()), tooManyRequests(rate.retryAfterSeconds), { "Retry-After": String(rate.retryAfterSeconds) });
    return undefined;
  }
  options.onIdentified?.(identity, owner, req.headers.authorization);
  return { identity, owner };
}

/** A legacy-shaped request: refused when the legacy door is off, else (authenticated if it must be) passed through. */
function serveLegacy(visit: Visit, body: Buffer | undefined, json: () => unknown): void | Promise<void> {
  const { req, res, note, options } = visit;
  note.door = "legacy";
  if (!options.legacy.enabled || options.legacy.closed?.()) {
    note.rejected = "legacy_disabled";
    const elsewhere = options.legacy.enabled ? [] : (options.legacy.elsewhere?.() ?? []);
    return sendError(res, idOf(json()), legacyDoorClosed(legacyVersionOf(req.headers["mcp-protocol-version"], json()), elsewhere));
  }
  if (!options.legacy.authenticate) return options.passThrough.handle(req, res, body, visit, undefined);
  const pass = (known: Caller | undefined) => {
    if (!known) return;
    const caller: LegacyCaller = { owner: known.owner, subject: known.identity.subject };
    return options.passThrough.handle(req, res, body, visit, caller);
  };
  const known = identify(visit, json, options.legacy.requiredScopes ?? options.requiredScopes);
  return known instanceof Promise ? known.then(pass) : pass(known);
}

/** A modern request: the router's reply (or the error it threw) written as JSON or SSE. */
function serveModern(
  visit: Visit,
  request: JsonRpcRequest,
  capabilities: ClientCapabilities,
  { identity, owner }: { identity: Identity; owner: string },
): Promise<void> {
  const { res, note, options, requestId } = visit;
  const { log } = options;
  note.rpcMethod = request.method;
  note.rpcId = request.id;
  const clientGone = new ClientGone();
  const meta = request.params._meta as JsonObject;
  // Off: not even the span's input is made.
  const span = tracingOn() ? startRequestSpan({ ...request, meta, headers: visit.req.headers, ownerHash: owner }) : undefined;
  visit.onClose = () => {
    if (!res.writableFinished) clientGone.leave();
    if (span) setImmediate(() => endRequestSpan(span, note, requestOutcome(note, res.statusCode, res.writableFinished), res.statusCode));
  };
  if (span) Object.assign(note, traceIdsOf(span)); // the request's line (written after the span ended) names its trace
  const methodRequest: MethodRequest = {
    id: request.id,
    method: request.method,
    params: request.params,
    meta,
    capabilities,
    identity,
    headers: visit.req.headers,
    gone: clientGone,
    log: requestLog(log, { requestId, rpcMethod: request.method }),
    note,
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
  };
  const write = (reply: Reply) => writeReply(res, request.id, reply, { keepAliveMs: options.keepAliveMs });
  const failed = (error: unknown) => {
    if (!(error instanceof RpcError))
      log.error({ event: "request.crashed", requestId, rpcMethod: request.method, err: error }, "handler crashed");
    const rpc = error instanceof RpcError ? error : internalError("Internal error");
    note.error = rpc.code;
    const reason = (rpc.data as { reason?: unknown } | undefined)?.reason;
    if (typeof reason === "string") note.reason = reason;
    return write(errorReply(rpc));
  };
  const answer = (): Promise<void> => {
    let dispatched: Promise<Reply>;
    try {
      dispatched = options.router.dispatch(methodRequest);
    } catch (error) {
      return Promise.resolve(failed(error));
    }
    return dispatched.then(write, failed);
  };
  return span ? withSpan(span, answer) : answer();
}
