// The legacy door: a legacy-shaped request is forwarded to the upstream unchanged (SSE streams
// included; upstreamForwarder.ts) but for hop-by-hop headers and credentials: the caller's
// Authorization goes on only with upstream.forwardAuthorization, the caller's own copy of the subject header never, and
// upstream.headers and the caller's subject are added (UpstreamCredentials). Session ids the
// upstream issues are remembered so later requests of that session (POST, GET stream, DELETE) are
// recognised as legacy. When the door authenticates, each session is bound to the identity that
// opened it: another identity, or a session this process did not see opened (e.g. before a
// restart, so its owner is unknown), gets 404 "session not found", as if it did not exist, and
// starts a session of its own. Its log lines carry the request id the front door gave the request.
// Connections to the upstream are kept alive (the forwarder's agent).
// With tracing on, a POST carrying one request is a server span and its proxied copy a client span
// under it, whose context replaces the caller's in the body's `_meta` and in the traceparent header
// (the only change: the body is written again as JSON, its other values the caller's); off, the door
// does one boolean test and the bytes go on as read.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { endLegacySpan, failLegacySpan, startLegacySpan, tracedRequestOf, watchResponse } from "../observability/legacySpan.js";
import { type Span, traceHeadersOf, traceIdsOf, tracingOn, withSpan } from "../observability/tracing.js";
import { endClientSpan, startClientSpan } from "../observability/upstreamSpan.js";
import { internalError, invalidRequest } from "../protocol/errors.js";
import type { UpstreamCredentials } from "../upstream/upstreamCredentials.js";
import { sendError } from "./jsonResponse.js";
import { createUpstreamForwarder, type ForwardHooks } from "./upstreamForwarder.js";

/** Who sends a legacy request, when the legacy door authenticates. */
export interface LegacyCaller {
  /** The identity's owner hash (sessions are bound to it). */
  owner: string;
  subject: string;
}

/** What the front door knows of a legacy request: its id, for the lines logged about it, and the
 *  fields of its `request` line, where a door that traces it writes the trace and span ids. */
export interface LegacyVisit {
  requestId: string;
  note: { trace_id?: string; span_id?: string };
}

export interface PassThrough {
  /** `caller`: the authenticated identity (undefined when the legacy door is open). */
  handle(req: IncomingMessage, res: ServerResponse, body: Buffer | undefined, visit: LegacyVisit, caller?: LegacyCaller): void;
  isKnownSession(id: string): boolean;
  /** Ends what the door holds (the stdio bridge: its sessions and their processes). */
  close(): Promise<void>;
}

export interface PassThroughOptions {
  credentials: UpstreamCredentials;
  /** Sessions are bound to the identity that opened them (the door authenticates). */
  bindSessions: boolean;
  /** A new connection to the upstream not up within this long fails (upstream.connectTimeoutMs). */
  connectTimeoutMs: number;
}

/** A session nobody used for this long is forgotten (the upstream will have expired it too). */
const SESSION_IDLE_MS = 24 * 60 * 60 * 1000;

/** What the front door already knows of a request: the request id, the caller; its spans when traced. */
interface KnownRequest {
  requestId: string;
  caller: LegacyCaller | undefined;
  traced?: TracedRequest;
}

interface TracedRequest {
  server: Span;
  client: Span;
  id: string | number;
  /** The trace headers of the forwarded copy (the client span's context). */
  headers: Record<string, string> | undefined;
}

interface KnownSession {
  lastSeen: number;
  /** Owner hash of the identity that opened it (bound sessions only). */
  owner?: string;
}

export function createPassThrough(upstreamUrl: string, log: Logger, options: PassThroughOptions): PassThrough {
  const target = new URL(upstreamUrl);
  const sessions = new Map<string, KnownSession>();

  const forwarder = createUpstreamForwarder(target, options.connectTimeoutMs);

  /** What the door does around each forwarded request: the credentials and trace context on it, the
   *  sessions its answer issues or ends, and the one line saying what happened. */
  const hooksFor = (req: IncomingMessage, request: KnownRequest): ForwardHooks => ({
    headers: (outgoing) => {
      options.credentials.rewrite(
        req.headers,
        request.caller?.subject,
        (name, value) => {
          outgoing[name] = value;
        },
        (name) => {
          delete outgoing[name];
        },
      );
      if (request.traced?.headers) Object.assign(outgoing, request.traced.headers);
    },
    answered: (answer) => {
      if (request.traced) traceAnswer(request.traced, answer);
      const issued = answer.headers["mcp-session-id"];
      if (typeof issued === "string")
        sessions.set(issued, { lastSeen: Date.now(), ...(request.caller ? { owner: request.caller.owner } : {}) });
      const used = req.headers["mcp-session-id"];
      if (typeof used === "string" && (req.method === "DELETE" || answer.statusCode === 404)) sessions.delete(used);
      log.info(
        {
          event: "legacy.proxied",
          requestId: request.requestId,
          httpMethod: req.method,
          status: answer.statusCode,
          newSession: typeof issued === "string",
        },
        "legacy request passed through",
      );
    },
    failed: (error, res) => {
      log.warn({ event: "legacy.proxy.failed", requestId: request.requestId, err: String(error) }, "legacy pass-through failed");
      if (request.traced) traceFailure(request.traced, error);
      sendError(res, null, internalError(`Upstream unreachable: ${error.message}`, undefined, 502));
    },
  });

  return {
    handle(req, res, body, visit, caller) {
      const { requestId } = visit;
      const used = req.headers["mcp-session-id"];
      const session = typeof used === "string" ? sessions.get(used) : undefined;
      if (options.bindSessions && typeof used === "string" && (session === undefined || session.owner !== caller?.owner)) {
        // Another identity's session looks exactly like an unknown one.
        log.info({ event: "legacy.session.refused", requestId, known: session !== undefined }, "legacy session not bound to this identity");
        return sendError(res, null, invalidRequest("Session not found: send initialize to start a new session", 404));
      }
      const traced = tracingOn() ? traceRequest(req, res, body, target.href, caller?.owner) : undefined;
      if (traced) Object.assign(visit.note, traceIdsOf(traced.spans.server));
      const request: KnownRequest = { requestId, caller, ...(traced ? { traced: traced.spans } : {}) };
      if (session) session.lastSeen = Date.now();
      const forward = () => forwarder.forward(req, res, traced?.body ?? body, hooksFor(req, request));
      // Traced, the door's own lines (legacy.proxied, legacy.proxy.failed) are written inside its span.
      if (traced) withSpan(traced.spans.server, forward);
      else forward();
    },
    isKnownSession(id) {
      const session = sessions.get(id);
      if (session === undefined) return false;
      if (Date.now() - session.lastSeen > SESSION_IDLE_MS) {
        sessions.delete(id);
        return false;
      }
      return true;
    },
    async close() {
      // Forwarded requests end with the server's connections; the idle ones to the upstream end here.
      forwarder.close();
    },
  };
}

/** A POST carrying one request, traced: its server span (ended with the response), the client span of its
 *  proxied copy, and the body with that span's context in `_meta`; undefined for what gets no span. */
function traceRequest(
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer | undefined,
  target: string,
  owner: string | undefined,
): { spans: TracedRequest; body: Buffer } | undefined {
  let message: unknown;
  try {
    message = body && body.length > 0 ? JSON.parse(body.toString("utf8")) : undefined;
  } catch {
    return undefined;
  }
  const request = tracedRequestOf(message);
  const server = startLegacySpan(req, message, "pass_through", owner);
  if (!request || !server) return undefined;
  res.once("close", () => endLegacySpan(server, res.statusCode, res.writableFinished));
  const client = withSpan(server, () => startClientSpan(request.method, request.id, request.params, target));
  if (!client) return undefined;
  const forwarded = Buffer.from(JSON.stringify({ ...(message as object), params: client.params }));
  return { spans: { server, client: client.span, id: request.id, headers: traceHeadersOf(client.params._meta) }, body: forwarded };
}

/** The upstream's answer read along as it is proxied: its JSON-RPC response ends the client span and marks both. */
function traceAnswer(traced: TracedRequest, answer: IncomingMessage): void {
  watchResponse(answer, traced.id, (response) => {
    failLegacySpan(traced.server, response);
    endClientSpan(traced.client, response);
  });
}

/** The proxy could not reach the upstream: both spans say upstream_unreachable. */
function traceFailure(traced: TracedRequest, error: Error): void {
  const failure = { reason: "upstream_unreachable", message: error.message };
  failLegacySpan(traced.server, undefined, failure);
  failLegacySpan(traced.client, undefined, failure);
  traced.client.end();
}
