// The legacy door: a legacy-shaped request is proxied to the upstream unchanged (SSE streams
// included) with http-proxy-middleware. Session ids the upstream issues are remembered so later
// requests of that session (POST, GET stream, DELETE) are recognised as legacy. Its log lines
// carry the request id the front door gave the request.

import type { IncomingMessage, ServerResponse } from "node:http";
import { createProxyMiddleware } from "http-proxy-middleware";
import type { Logger } from "pino";
import { internalError } from "../protocol/errors.js";
import { sendError } from "./jsonResponse.js";

export interface PassThrough {
  /** `requestId`: the request's id, for the lines logged about it. */
  handle(req: IncomingMessage, res: ServerResponse, body: Buffer | undefined, requestId: string): void;
  isKnownSession(id: string): boolean;
  /** Ends what the door holds (the stdio bridge: its sessions and their processes). */
  close(): Promise<void>;
}

/** A session nobody used for this long is forgotten (the upstream will have expired it too). */
const SESSION_IDLE_MS = 24 * 60 * 60 * 1000;

export function createPassThrough(upstreamUrl: string, log: Logger): PassThrough {
  const target = new URL(upstreamUrl);
  const sessions = new Map<string, number>();
  /** What the front door already knows of each request: the body it read, the request id. */
  const known = new WeakMap<IncomingMessage, { body: Buffer | undefined; requestId: string }>();

  const proxy = createProxyMiddleware<IncomingMessage, ServerResponse>({
    target: target.origin,
    changeOrigin: true,
    pathRewrite: (path) => target.pathname + (path.includes("?") ? path.slice(path.indexOf("?")) : ""),
    on: {
      proxyReq: (proxyReq, req) => {
        // The body was already read to classify the request; send the same bytes on.
        const body = known.get(req)?.body;
        if (body && body.length > 0) {
          proxyReq.setHeader("Content-Length", body.length);
          proxyReq.write(body);
        }
      },
      proxyRes: (proxyRes, req) => {
        const issued = proxyRes.headers["mcp-session-id"];
        if (typeof issued === "string") sessions.set(issued, Date.now());
        const used = req.headers["mcp-session-id"];
        if (typeof used === "string" && (req.method === "DELETE" || proxyRes.statusCode === 404)) sessions.delete(used);
        log.info(
          { event: "legacy.proxied", requestId: known.get(req)?.requestId, httpMethod: req.method, status: proxyRes.statusCode, newSession: typeof issued === "string" },
          "legacy request passed through",
        );
      },
      error: (error, req, res) => {
        log.warn({ event: "legacy.proxy.failed", requestId: known.get(req)?.requestId, err: String(error) }, "legacy pass-through failed");
        const out = res as ServerResponse;
        if (!out.headersSent) sendError(out, null, internalError(`Upstream unreachable: ${error.message}`, undefined, 502));
      },
    },
  });

  return {
    handle(req, res, body, requestId) {
      known.set(req, { body, requestId });
      const used = req.headers["mcp-session-id"];
      if (typeof used === "string" && sessions.has(used)) sessions.set(used, Date.now());
      void proxy(req, res, () => undefined);
    },
    isKnownSession(id) {
      const seen = sessions.get(id);
      if (seen === undefined) return false;
      if (Date.now() - seen > SESSION_IDLE_MS) {
        sessions.delete(id);
        return false;
      }
      return true;
    },
    async close() {
      // Nothing held: proxied requests end with the server's connections.
    },
  };
}
