// UpstreamLink: the configured upstream, whichever way taskgate reaches it: over HTTP
// (upstream.url: keep-alive connections, sessions the upstream numbers) or by starting it
// (upstream.command: one stdio server process per session, bounded by upstream.maxProcesses).
// The pool gets a transport per session from it and does not care which.

import type { Logger } from "pino";
import type { UpstreamOptions } from "../config/schema.js";
import { closeLeftoverSession, HttpTransport, type UpstreamDispatchers, upstreamDispatchers } from "./httpTransport.js";
import { StdioProcesses } from "./stdioProcesses.js";
import { StdioTransport } from "./stdioTransport.js";
import type { UpstreamTransport } from "./transport.js";
import type { UpstreamCredentials } from "./upstreamCredentials.js";

export interface UpstreamLink {
  /** The URL, or the command line: for logs. */
  readonly target: string;
  /** A transport for one new session of `owner` (whose credentials it carries over HTTP) and capability profile `profileKey`. */
  connect(owner: string, profileKey: string): UpstreamTransport;
  /** Sessions at most, and the option that sets it. */
  readonly maxSessions: number;
  readonly maxSessionsOption: string;
  /** What a session is, for that error. */
  readonly sessionsAre: string;
  /** The started processes (upstream.command only). */
  readonly processes?: StdioProcesses;
  /** The HTTP upstream's URL (upstream.url only): the legacy door proxies to it. */
  readonly url?: string;
  /** Closes sessions a crashed taskgate left upstream (HTTP only: processes die with taskgate); how many were closed. */
  closeLeftovers(sessionIds: string[]): Promise<number>;
  close(): Promise<void>;
}

/** `credentials`: what an HTTP upstream is shown of taskgate and the caller; `readinessOwner`'s
 *  requests (taskgate's own checks) carry taskgate's credentials only. */
export function openUpstreamLink(
  upstream: UpstreamOptions,
  log: Logger,
  credentials: UpstreamCredentials,
  readinessOwner: string,
): UpstreamLink {
  if (upstream.command) {
    const processes = new StdioProcesses({
      command: upstream.command,
      env: upstream.env,
      ...(upstream.cwd ? { cwd: upstream.cwd } : {}),
      maxProcesses: upstream.maxProcesses,
      stopGraceMs: upstream.stopGraceMs,
      log,
    });
    return {
      target: processes.target,
      connect: (_owner, profile) => new StdioTransport({ processes, profile, sendTimeoutMs: upstream.requestTimeoutMs }),
      maxSessions: Math.min(upstream.maxSessions, upstream.maxProcesses),
      maxSessionsOption: upstream.maxProcesses <= upstream.maxSessions ? "upstream.maxProcesses" : "upstream.maxSessions",
      sessionsAre: "server processes (one per upstream session)",
      processes,
      closeLeftovers: async () => 0,
      close: () => processes.close(),
    };
  }
  const url = upstream.url as string; // the schema requires url when there is no command
  const dispatchers: UpstreamDispatchers = upstreamDispatchers(url, upstream.connectTimeoutMs, upstream.connections);
  return {
    target: url,
    url,
    connect: (owner) =>
      new HttpTransport({
        url,
        dispatchers,
        log,
        sendTimeoutMs: upstream.requestTimeoutMs,
        headers: () => credentials.headersFor(owner),
        credentialsOf: upstream.forwardAuthorization && owner !== readinessOwner ? "caller" : "taskgate",
      }),
    maxSessions: upstream.maxSessions,
    maxSessionsOption: "upstream.maxSessions",
    sessionsAre: "upstream sessions",
    async closeLeftovers(sessionIds) {
      const closed = await Promise.all(
        sessionIds.map((sessionId) => closeLeftoverSession({ url, sessionId, dispatcher: dispatchers.short, headers: upstream.headers })),
      );
      return closed.filter(Boolean).length;
    },
    close: () => dispatchers.close(),
  };
}
