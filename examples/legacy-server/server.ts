// startLegacyServer(): the example legacy (2025-11-25 and older) MCP server on SDK 1.x, stateful
// Streamable HTTP at /mcp: initialize opens a session (one McpServer + transport each), responses
// stream as SSE, GET opens the standalone stream, DELETE ends the session, unknown session ids get
// 404 (or, with unknownSessionStatus 400, the answer server-everything gives). `events` reports
// what really happened (see state.ts); close() leaves nothing running.

import { EventEmitter } from "node:events";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import express, { type NextFunction, type Request, type Response } from "express";
import { openSession } from "./session.js";
import type { SessionContext, SharedState } from "./state.js";

export interface LegacyServerOptions {
  /** 0 = a free port. Default 0. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Delay divisor (10 ⇒ ten times faster). Default: env LEGACY_SPEED, else 1. */
  speed?: number;
  /**
   * How a request with an unknown session id is answered. 404 (default): `Session not found`, as the
   * spec says. 400: `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session
   * ID provided"}}` without an `id`, byte for byte what server-everything and the SDK 1.11-era
   * examples answer, so tests can restart "such a server".
   */
  unknownSessionStatus?: 404 | 400;
  /**
   * Give every session an in-memory event store (default false): each SSE event carries an `id:`
   * and a client that loses a stream tries to resume it with Last-Event-ID, as it does with
   * server-everything.
   */
  resumable?: boolean;
}

export interface LegacyServer {
  /** http://127.0.0.1:PORT/mcp */
  url: string;
  port: number;
  /**
   * "session-opened" (on notifications/initialized) / "session-closed" {sessionId, clientCapabilities}, "tool-started" {tool,
   * sessionId, requestId}, "tool-finished" {tool, outcome, ...}, "cancelled" {tool, requestId,
   * reason}, "elicitation-answered" {tool, action, content}, "sampling-answered" {tool, text, model},
   * "roots-answered" {tool, roots}, "ping-answered" {tool}. Payload types are exported from state.ts.
   */
  events: EventEmitter;
  sessionCount(): number;
  /** TCP connections open to the server right now (clients' keep-alive and streaming ones). */
  connectionCount(): Promise<number>;
  /** TCP connections the server accepted since it started (a client that does not keep its connections alive opens one per request). */
  acceptedConnections(): number;
  /** Forgets every session at once (their next request gets 404) and closes them (open streams end,
   *  running tools abort with outcome "closed"). The returned promise settles when all are closed. */
  expireAllSessions(): Promise<void>;
  /** Closes every session and the HTTP server, including idle keep-alive connections. */
  close(): Promise<void>;
}

function rpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: "2.0", error: { code, message }, id: null });
}

function unknownSession(res: Response, status: 404 | 400): void {
  if (status === 404) return rpcError(res, 404, -32001, "Session not found");
  res.status(400).json({ jsonrpc: "2.0", error: { code: -32000, message: "Bad Request: No valid session ID provided" } });
}

function resolveSpeed(speed: number | undefined): number {
  const value = speed ?? Number(process.env.LEGACY_SPEED ?? 1);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`speed must be a positive number, got ${String(value)}`);
  return value;
}

function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "::") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}

export async function startLegacyServer(opts: LegacyServerOptions = {}): Promise<LegacyServer> {
  const host = opts.host ?? "127.0.0.1";
  const events = new EventEmitter();
  events.setMaxListeners(100);
  const state: SharedState = { speed: resolveSpeed(opts.speed), events, counter: 0, betaEnabled: false, sessions: new Map() };
  /** Every session ever opened and not yet closed, including ones whose initialize is in flight. */
  const open = new Set<SessionContext>();

  const app = express();
  app.use("/mcp", express.json({ limit: "4mb" }));
  app.all("/mcp", async (req: Request, res: Response) => {
    const sessionId = req.get("mcp-session-id");
    if (sessionId !== undefined) {
      const session = state.sessions.get(sessionId);
      if (!session) return unknownSession(res, opts.unknownSessionStatus ?? 404);
      return session.transport.handleRequest(req, res, req.body);
    }
    if (req.method === "POST" && isInitializeRequest(req.body)) {
      const session = await openSession(state, (closed) => open.delete(closed), { resumable: opts.resumable ?? false });
      open.add(session);
      await session.transport.handleRequest(req, res, req.body);
      if (session.transport.sessionId === undefined) await session.mcp.close(); // the transport refused it
      return;
    }
    if (req.method === "GET" || req.method === "POST" || req.method === "DELETE") {
      return rpcError(res, 400, -32000, "Bad Request: Mcp-Session-Id header is required");
    }
    res.set("Allow", "GET, POST, DELETE");
    return rpcError(res, 405, -32000, "Method not allowed.");
  });
  app.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const status = (err as { status?: number }).status;
    if (status === 400) return rpcError(res, 400, -32700, "Parse error: Invalid JSON");
    return rpcError(res, 500, -32603, err instanceof Error ? err.message : "Internal error");
  });

  const httpServer = createServer(app);
  let accepted = 0;
  httpServer.on("connection", () => accepted++);
  await listen(httpServer, opts.port ?? 0, host);
  const port = (httpServer.address() as AddressInfo).port;

  const closeSessions = async (sessions: Iterable<SessionContext>) => {
    await Promise.all([...sessions].map((s) => s.mcp.close().catch(() => undefined)));
  };

  return {
    url: `http://${urlHost(host)}:${port}/mcp`,
    port,
    events,
    sessionCount: () => state.sessions.size,
    connectionCount: () =>
      new Promise<number>((resolve, reject) => httpServer.getConnections((error, count) => (error ? reject(error) : resolve(count)))),
    acceptedConnections: () => accepted,
    expireAllSessions: async () => {
      const expired = [...state.sessions.values()];
      state.sessions.clear();
      await closeSessions(expired);
    },
    close: async () => {
      state.sessions.clear();
      await closeSessions(open);
      await new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeAllConnections();
      });
    },
  };
}

function listen(server: HttpServer, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}
