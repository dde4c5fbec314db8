// A plain HTTP proxy of ours in front of a real upstream that records the JSON-RPC method and params of
// every POST it forwards (with the Mcp-Session-Id it carried), so a test can count what the upstream was
// really asked (e.g. how many tools/list). Everything else, SSE streams included, passes through
// unchanged (http-proxy-middleware: a proxy written by others, not taskgate's own forwarder). It also records the headers of
// every HTTP request that reached it and, given `refuse`, answers some with 401/403 itself: an
// upstream that checks credentials, to show what taskgate sends it.

import { Agent, createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { createProxyMiddleware, fixRequestBody } from "http-proxy-middleware";

export interface ForwardedRequest {
  method: string;
  params: Record<string, unknown> | undefined;
  sessionId: string | undefined;
  headers: IncomingHttpHeaders;
}

/** One HTTP request that reached the proxy (POST, GET stream, DELETE), refused or not. */
export interface SeenRequest {
  httpMethod: string;
  headers: IncomingHttpHeaders;
  refused?: number;
}

export interface CountingProxyOptions {
  /** Keep connections to the upstream alive, so the proxy's answers do not close the caller's connections either. */
  keepAlive?: boolean;
  /** A status (401/403) to answer a request with instead of forwarding it; undefined forwards it. */
  refuse?(headers: IncomingHttpHeaders): 401 | 403 | undefined;
}

export interface CountingProxy {
  /** The proxy's URL for the upstream's MCP endpoint. */
  url: string;
  /** Every JSON-RPC request (with a method) forwarded so far, in order. */
  readonly forwarded: readonly ForwardedRequest[];
  /** Every HTTP request that reached the proxy, in order. */
  readonly seen: readonly SeenRequest[];
  /** How many forwarded requests had this method. */
  count(method: string): number;
  /** TCP connections the proxy accepted since it started. */
  accepted(): number;
  /** The most requests of `method` the upstream was answering at once (in flight through the proxy), since the start. */
  mostInFlight(method: string): number;
  close(): Promise<void>;
}

export async function startCountingProxy(upstreamUrl: string, options: CountingProxyOptions = {}): Promise<CountingProxy> {
  const target = new URL(upstreamUrl);
  const forwarded: ForwardedRequest[] = [];
  const seen: SeenRequest[] = [];
  const app = express();
  app.use((req, res, next) => {
    const refused = options.refuse?.(req.headers);
    seen.push({ httpMethod: req.method, headers: { ...req.headers }, ...(refused ? { refused } : {}) });
    if (!refused) return next();
    res
      .status(refused)
      .set("WWW-Authenticate", 'Bearer error="invalid_token"')
      .json({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Unauthorized" } });
  });
  app.use(express.json({ limit: "10mb", type: () => true }));
  const inFlight = new Map<string, number>();
  const mostInFlight = new Map<string, number>();
  app.use((req, res, next) => {
    const messages: unknown[] = Array.isArray(req.body) ? req.body : [req.body];
    for (const message of messages) {
      const { method, params } = (message ?? {}) as { method?: unknown; params?: Record<string, unknown> };
      const session = req.headers["mcp-session-id"];
      if (typeof method !== "string") continue;
      forwarded.push({ method, params, sessionId: typeof session === "string" ? session : undefined, headers: { ...req.headers } });
      const now = (inFlight.get(method) ?? 0) + 1;
      inFlight.set(method, now);
      mostInFlight.set(method, Math.max(now, mostInFlight.get(method) ?? 0));
      res.once("close", () => inFlight.set(method, (inFlight.get(method) ?? 1) - 1));
    }
    next();
  });
  const agent = options.keepAlive ? new Agent({ keepAlive: true }) : undefined;
  app.use(createProxyMiddleware({ target: target.origin, ...(agent ? { agent } : {}), on: { proxyReq: fixRequestBody } }));
  const server: Server = createServer(app);
  // Without keepAlive the forwarded answers carry the upstream's `Connection: close` (http-proxy's
  // default agent), so a client opens a connection per request here.
  let accepted = 0;
  server.on("connection", () => {
    accepted++;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    forwarded,
    seen,
    count: (method) => forwarded.filter((request) => request.method === method).length,
    accepted: () => accepted,
    mostInFlight: (method) => mostInFlight.get(method) ?? 0,
    close: () =>
      new Promise((resolve) => {
        agent?.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
