// The legacy door for a stdio upstream: an old client's session (initialize, Mcp-Session-Id) gets
// a server process of its own, and the SDK's Streamable HTTP server transport speaks to the
// client while the process's stdin/stdout carry the same messages unchanged. What the process
// sends goes back on:
//   - a response: the stream of its request (the SDK transport matches the id);
//   - progress: the stream of the request whose progressToken it names;
//   - a request (elicitation, sampling, roots) or a log message: the stream of the client's latest
//     request still open (it is the same client session, so any of its streams is right), else
//     the session's GET stream;
//   - other notifications (list changes, resource updates): the GET stream.
// A session closes on DELETE, after upstream.sessionIdleMs without a message either way and with no
// request waiting for its response, when its
// process exits, or at shutdown; later requests on it get 404 (old clients initialize again). A
// process is started for an initialize only: anything else without a session is a 400.
// Processes count against upstream.maxProcesses; at the bound the initialize gets HTTP 503.
// With tracing on, a POST carrying one request is a server span, and the request written to the
// process a client span under it (network.transport pipe) whose context replaces the caller's in
// its `_meta`; the response, an exit or the session's end ends it.

import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import { endLegacySpan, failLegacySpan, startLegacySpan, tracedRequestOf } from "../observability/legacySpan.js";
import { activeSpan, type Span, traceIdsOf, withSpan } from "../observability/tracing.js";
import { endClientSpan, startClientSpan } from "../observability/upstreamSpan.js";
import { internalError, invalidRequest, parseError } from "../protocol/errors.js";
import type { RequestId } from "../protocol/wire.js";
import type { ServerProcess } from "../upstream/serverProcess.js";
import type { StdioProcesses } from "../upstream/stdioProcesses.js";
import type { JsonRpcMessage } from "../upstream/transport.js";
import { UpstreamFailure } from "../upstream/upstreamFailure.js";
import { sendError } from "./jsonResponse.js";
import type { LegacyCaller, LegacyVisit, PassThrough } from "./passThrough.js";

export interface StdioBridgeOptions {
  processes: StdioProcesses;
  /** A session with no message either way for this long is closed (upstream.sessionIdleMs). */
  idleMs: number;
  /** A message the process does not take within this long fails (upstream.requestTimeoutMs). */
  sendTimeoutMs: number;
  /** Sessions are bound to the identity that opened them (the door authenticates). */
  bindSessions: boolean;
  log: Logger;
}

interface BridgedSession {
  transport: StreamableHTTPServerTransport;
  server: ServerProcess;
  /** The client's requests still waiting for their response, oldest first. */
  open: RequestId[];
  progressTokens: Map<string | number, RequestId>;
  lastUsed: number;
  /** The owner hash of the identity that opened it (when the door authenticates). */
  owner?: string;
  /** With tracing on: the spans of the requests still waiting for their response, by id. */
  traced?: Map<RequestId, { client: Span; server: Span | undefined }>;
}

export function createStdioBridge(options: StdioBridgeOptions): PassThrough {
  return new StdioBridge(options);
}

class StdioBridge implements PassThrough {
  private readonly sessions = new Map<string, BridgedSession>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly options: StdioBridgeOptions) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(1_000, Math.min(options.idleMs, 60_000)));
    this.sweeper.unref();
  }

  handle(req: IncomingMessage, res: ServerResponse, body: Buffer | undefined, visit: LegacyVisit, caller: LegacyCaller | undefined): void {
    const { log } = this.options;
    const { requestId } = visit;
    const parsed = parsedBody(body);
    // The front door has read the body already: the SDK transport must be given it parsed, never
    // left to read the (consumed) request itself.
    if (req.method === "POST" && parsed === undefined) return sendError(res, null, parseError("Parse error: the body is not JSON"));
    const id = req.headers["mcp-session-id"];
    const found = typeof id === "string" ? this.sessions.get(id) : undefined;
    // Another identity's session looks exactly like an unknown one.
    const session = this.options.bindSessions && found && found.owner !== caller?.owner ? undefined : found;
    if (found && !session)
      log.info({ event: "legacy.session.refused", requestId, known: true }, "legacy session not bound to this identity");
    const done = (error: unknown) => {
      log.warn({ event: "legacy.bridge.failed", requestId, err: String(error) }, "legacy request through the stdio bridge failed");
      if (!res.headersSent) sendError(res, null, internalError("legacy session failed", undefined, 502));
    };
    const span = startLegacySpan(req, parsed, "stdio_bridge", caller?.owner);
    if (span) {
      Object.assign(visit.note, traceIdsOf(span));
      res.once("close", () => endLegacySpan(span, res.statusCode, res.writableFinished));
    }
    if (session) {
      session.lastUsed = Date.now();
      // The request reaches forward() inside the SDK transport's handling: its client span is the door span's child.
      const handled = () => session.transport.handleRequest(req, res, parsed);
      (span ? withSpan(span, handled) : handled()).catch(done);
    } else if (typeof id === "string") {
      // Ended (DELETE, idle, its process exited) or never ours: 404 tells an old client to initialize again.
      const gone = `Session not found: legacy session ${id} has ended (closed, idle, or its server process exited); initialize again`;
      sendError(res, null, invalidRequest(gone, 404));
    } else if (req.method === "POST" && isInitialize(parsed)) {
      const opened = () => this.open(req, res, parsed, requestId, caller?.owner);
      (span ? withSpan(span, opened) : opened()).catch(done);
    } else {
      // A process is started for an initialize only.
      sendError(res, null, invalidRequest("Bad Request: no Mcp-Session-Id; a legacy session starts with initialize", 400));
    }
  }

  isKnownSession(id: string): boolean {
    return this.sessions.has(id);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.allSettled([...this.sessions].map(([id, session]) => this.end(id, session)));
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, session] of this.sessions) {
      // A session waiting for a response is not idle, however quiet (a long call without progress).
      if (session.open.length === 0 && now - session.lastUsed > this.options.idleMs) {
        this.options.log.info({ event: "legacy.bridge.idle", session: id, pid: session.server.pid }, "idle legacy session closed");
        void this.end(id, session);
      }
    }
  }

  private async end(id: string, session: BridgedSession): Promise<void> {
    if (this.sessions.get(id) !== session) return;
    this.sessions.delete(id);
    this.endTraced(session, { reason: "upstream_lost", message: "the legacy session ended before the response" });
    await Promise.allSettled([session.transport.close(), session.server.stop()]);
  }

  /** Delivers one message of the process to the old client, on the stream it belongs to. */
  private deliver(session: BridgedSession, message: JsonRpcMessage): void {
    session.lastUsed = Date.now();
    let related: RequestId | undefined;
    if (message.method === undefined && message.id !== undefined) {
      session.open = session.open.filter((id) => id !== message.id);
      if (session.traced) this.answered(session.traced, message);
      for (const [token, id] of session.progressTokens) if (id === message.id) session.progressTokens.delete(token);
    } else if (message.method === "notifications/progress") {
      related = session.progressTokens.get(message.params?.progressToken as string | number);
    } else if (message.id !== undefined || message.method === "notifications/message") {
      related = session.open[session.open.length - 1];
    }
    session.transport
      .send(message as JSONRPCMessage, related === undefined ? undefined : { relatedRequestId: related })
      .catch((error: unknown) => {
        this.options.log.debug(
          { event: "legacy.bridge.undelivered", method: message.method, err: (error as Error).message },
          "a message of the server process could not reach the old client",
        );
      });
  }

  /** Ends the spans of the request `response` answers. */
  private answered(traced: NonNullable<BridgedSession["traced"]>, response: JsonRpcMessage): void {
    const spans = traced.get(response.id as RequestId);
    if (!spans) return;
    traced.delete(response.id as RequestId);
    if (spans.server) failLegacySpan(spans.server, response);
    endClientSpan(spans.client, response);
  }

  /** The spans still open (of request `only`, else all) when the process exited or the session ended: failed, ended. */
  private endTraced(session: BridgedSession, failure: { reason: string; message: string }, only?: RequestId): void {
    for (const [id, spans] of session.traced ?? []) {
      if (only !== undefined && id !== only) continue;
      session.traced?.delete(id);
      if (spans.server) failLegacySpan(spans.server, undefined, failure);
      failLegacySpan(spans.client, undefined, failure);
      spans.client.end();
    }
  }

  /** Passes one message of the old client to the process, keeping track of the requests still open. */
  private forward(session: BridgedSession, message: JsonRpcMessage): void {
    session.lastUsed = Date.now();
    const request = this.traced(session, message);
    if (request.method !== undefined && request.id !== undefined) {
      session.open.push(request.id);
      const token = (request.params?._meta as { progressToken?: string | number } | undefined)?.progressToken;
      if (token !== undefined) session.progressTokens.set(token, request.id);
    } else if (request.method === "notifications/cancelled") {
      // A cancelled request gets no response: it no longer keeps the session busy.
      const cancelled = request.params?.requestId;
      session.open = session.open.filter((id) => id !== cancelled);
      const spans = session.traced?.get(cancelled as RequestId);
      if (spans) {
        session.traced?.delete(cancelled as RequestId);
        spans.client.setAttribute("taskgate.outcome", "cancelled");
        spans.client.end();
      }
    }
    session.server.send(request, this.options.sendTimeoutMs).catch((error: unknown) => {
      const reason = error instanceof UpstreamFailure ? error.reason : "upstream_exited";
      if (request.id !== undefined) this.endTraced(session, { reason, message: (error as Error).message }, request.id);
      this.options.log.warn(
        { event: "legacy.bridge.send.failed", pid: session.server.pid, err: (error as Error).message },
        "a message of the old client could not reach the server process",
      );
    });
  }

  /** The message as it goes to the process: with tracing on, a request in a client span under the door's span. */
  private traced(session: BridgedSession, message: JsonRpcMessage): JsonRpcMessage {
    const request = tracedRequestOf(message as unknown);
    const server = request ? activeSpan() : undefined;
    const client =
      request && server ? startClientSpan(request.method, request.id, request.params, this.options.processes.target) : undefined;
    if (!request || !client) return message;
    session.traced ??= new Map();
    session.traced.set(request.id, { client: client.span, server });
    return { ...message, params: client.params };
  }

  /** An initialize: a server process of its own, and the SDK transport in front of it. */
  private async open(req: IncomingMessage, res: ServerResponse, parsed: unknown, requestId: string, owner: string | undefined) {
    const { log } = this.options;
    // The SDK's HTTP server transport (and the web-standard adapter under it) is loaded by the first old
    // client in front of a stdio server, not by every taskgate: ~11 MB of memory nobody else uses.
    const { StreamableHTTPServerTransport } = await import("@modelcontextprotocol/sdk/server/streamableHttp.js");
    let server: ServerProcess;
    try {
      server = await this.options.processes.start("legacy-door");
    } catch (error) {
      const failure = error instanceof UpstreamFailure ? error : new UpstreamFailure("upstream_unreachable", String(error));
      log.warn(
        { event: "legacy.bridge.refused", requestId, reason: failure.reason, err: failure.message },
        "no server process for a legacy session",
      );
      return sendError(res, null, failure.toRpcError());
    }
    const session: BridgedSession = {
      server,
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          this.sessions.set(id, session);
          log.info(
            { event: "legacy.bridge.opened", requestId, session: id, pid: server.pid },
            "legacy session opened on a server process of its own",
          );
        },
        onsessionclosed: (id) => void this.end(id, session),
      }),
      open: [],
      progressTokens: new Map(),
      lastUsed: Date.now(),
      ...(owner !== undefined ? { owner } : {}),
    };
    session.transport.onmessage = (message) => this.forward(session, message as JsonRpcMessage);
    server.events = {
      message: (message) => this.deliver(session, message),
      exited: (failure) => {
        log.warn(
          { event: "legacy.bridge.exited", session: session.transport.sessionId, pid: server.pid, err: failure.message },
          "the server process of a legacy session ended",
        );
        this.endTraced(session, { reason: failure.reason, message: failure.message });
        if (session.transport.sessionId) void this.end(session.transport.sessionId, session);
        else void session.transport.close();
      },
    };
    try {
      await session.transport.handleRequest(req, res, parsed);
    } finally {
      // initialize refused (malformed) or failed: nothing will use the process.
      if (!session.transport.sessionId) void server.stop();
    }
  }
}

/** The body as JSON, or undefined when there is none or it is not JSON. */
function parsedBody(body: Buffer | undefined): unknown {
  if (!body || body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
}

/** Whether a legacy POST body is (or, batched, holds) an initialize request. */
function isInitialize(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => (message as { method?: unknown } | null)?.method === "initialize");
}
