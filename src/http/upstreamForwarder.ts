// Forwards one request to the upstream over kept-alive connections and streams its answer back as
// it comes (SSE included): node:http with one Agent, the request's headers minus the hop-by-hop
// ones (RFC 9110 §7.6.1) and with the upstream's Host, the answer's status and headers minus
// hop-by-hop, sent with the body's first bytes, or alone once they are 20 ms late (an SSE stream's
// status line does not wait for its first event). A client that leaves before the answer ended ends
// the upstream request (its connection is closed, so the upstream sees its stream end); an upstream
// that breaks off mid-answer breaks the client's response off too. A new connection that is not up
// within connectTimeoutMs fails naming upstream.connectTimeoutMs.
// Why not http-proxy(-middleware): measured, its per-request preparation (options copied and URLs
// parsed per request, an async middleware chain, an agent handed a large options object) was about
// 45 % of the legacy door's time from a request's arrival to its upstream write; this is the
// part of it a single-upstream door uses.

import {
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { Deadlines } from "../util/deadlines.js";

/** Idle keep-alive connections kept to the upstream, and how long each is kept: under the 5 s
 *  keep-alive timeout of Node-based servers, so a request is never written to a socket the upstream
 *  is closing. Busy ones are not capped: a capped agent queues requests without a limit behind
 *  long-lived GET streams. */
const IDLE_SOCKETS = 64;
const IDLE_MS = 4_000;

/** How long an answer's status line waits for the body's first bytes, to go out with them in one write (one
 *  wake-up of the client, not two, as a plain proxy does) — a quick answer's body follows its headers within a
 *  millisecond or two. Then it is sent alone: a GET stream's caller learns it is open, and a long call's client
 *  has its headers, before the upstream's first event, which may be minutes away. */
const HEAD_WAITS_FOR_BODY_MS = 20;
const headsAlone = Deadlines.of(HEAD_WAITS_FOR_BODY_MS);

/** Headers that belong to one connection, never forwarded (plus those a Connection header names). */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "proxy-authorization",
]);

export interface ForwardHooks {
  /** Adjusts the outgoing headers in place (credentials, trace context) before the request is sent. */
  headers(outgoing: OutgoingHttpHeaders): void;
  /** The upstream's answer, before it is streamed to the client. */
  answered(answer: IncomingMessage): void;
  /** The upstream could not be reached, or the exchange broke before the answer's headers. */
  failed(error: Error, res: ServerResponse): void;
}

export interface UpstreamForwarder {
  /** `body`: the bytes the front door already read (a POST); otherwise the request's own body is streamed on. */
  forward(req: IncomingMessage, res: ServerResponse, body: Buffer | undefined, hooks: ForwardHooks): void;
  /** Closes the idle connections (busy ones end with the server's). */
  close(): void;
}

export function createUpstreamForwarder(target: URL, connectTimeoutMs: number): UpstreamForwarder {
  const https = target.protocol === "https:";
  // `timeout` closes idle sockets only: on a busy one it is an event nobody acts on.
  const agentOptions = { keepAlive: true, maxFreeSockets: IDLE_SOCKETS, timeout: IDLE_MS, scheduling: "lifo" as const };
  const agent = https ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  const send = https ? httpsRequest : httpRequest;
  const { hostname, port, host } = target;
  const base = target.pathname;

  return {
    forward(req, res, body, hooks) {
      const headers = endToEnd(req.headers);
      headers.host = host;
      hooks.headers(headers);
      if (body) headers["content-length"] = body.length;
      const query = req.url?.indexOf("?") ?? -1;
      const path = query >= 0 ? base + (req.url as string).slice(query) : base;
      const out = send({ hostname, port, path, method: req.method, headers, agent });
      let connectLimit: NodeJS.Timeout | undefined;
      out.once("socket", (socket) => {
        if (!socket.connecting) return;
        connectLimit = setTimeout(
          () => out.destroy(new Error(`could not connect within ${connectTimeoutMs} ms (upstream.connectTimeoutMs)`)),
          connectTimeoutMs,
        );
        socket.once("connect", () => clearTimeout(connectLimit));
      });
      out.once("response", (answer) => {
        clearTimeout(connectLimit);
        hooks.answered(answer);
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.headers));
        answer.pipe(res);
        headsAlone.start(() => {
          if (!answer.readableDidRead && !res.destroyed) res.flushHeaders();
        });
        // Broken off upstream: the client's response is broken off too, not ended as if complete.
        answer.on("error", () => res.destroy());
      });
      // `on`, not `once`: a second error with no listener left would end the process.
      let failed = false;
      out.on("error", (error) => {
        clearTimeout(connectLimit);
        if (failed) return;
        failed = true;
        if (res.headersSent) res.destroy();
        else hooks.failed(error, res);
      });
      // The client left before the answer ended: the upstream request (and its connection) ends too.
      res.once("close", () => {
        if (!res.writableFinished) out.destroy();
      });
      if (body) out.end(body);
      else req.pipe(out);
    },
    close() {
      agent.destroy();
    },
  };
}

/** A message's end-to-end headers: all but the hop-by-hop ones (Node frames each connection itself). */
function endToEnd(incoming: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = connectionNamed(incoming.connection);
  const headers: OutgoingHttpHeaders = {};
  for (const name in incoming) if (!HOP_BY_HOP.has(name) && !named?.has(name)) headers[name] = incoming[name];
  return headers;
}

/** The header names a Connection header lists (they are hop-by-hop too), when it lists any but keep-alive/close. */
function connectionNamed(value: string | undefined): Set<string> | undefined {
  if (value === undefined || value === "keep-alive" || value === "close") return undefined;
  return new Set(value.split(",").map((name) => name.trim().toLowerCase()));
}
