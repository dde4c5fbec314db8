// The upstream side of an instance: one upstream server as taskgate reaches it — its link (HTTP or
// stdio processes), the credentials it is shown, the pool of sessions per identity, the catalog of
// its tools, the events of its notifications, and the legacy door in front of it (the HTTP
// pass-through, or the stdio bridge). Built from the `upstream` options only; the hooks say where
// its counts and session ids go. A second upstream would be a second one of these.

import type { Logger } from "pino";
import type { UpstreamOptions } from "../config/schema.js";
import { eraAwareLegacyDoor } from "../http/oldClientDoor.js";
import type { PassThrough } from "../http/passThrough.js";
import { createPassThrough } from "../http/passThrough.js";
import { createStdioBridge } from "../http/stdioBridge.js";
import type { UpstreamReason } from "../protocol/reasons.js";
import { UpstreamEvents } from "../subscriptions/upstreamEvents.js";
import { BackendEra } from "../upstream/backendEra.js";
import type { CancelOutcome } from "../upstream/jsonRpcPeer.js";
import { ModernLink } from "../upstream/modernLink.js";
import type { SessionLedger } from "../upstream/sessionLedger.js";
import { UpstreamCatalog } from "../upstream/upstreamCatalog.js";
import { UpstreamCredentials } from "../upstream/upstreamCredentials.js";
import { toClientError, UpstreamFailure } from "../upstream/upstreamFailure.js";
import { openUpstreamLink, type UpstreamLink } from "../upstream/upstreamLink.js";
import { UpstreamPool } from "../upstream/upstreamPool.js";
import type { PingOutcome } from "../upstream/upstreamSession.js";
import { closeQuietly } from "./closeQuietly.js";

/** The identity whose upstream session answers readiness checks (owners are hashes: no clash). */
const READINESS_OWNER = "taskgate:readiness";

export interface UpstreamSide {
  pool: UpstreamPool;
  catalog: UpstreamCatalog;
  events: UpstreamEvents;
  credentials: UpstreamCredentials;
  /** Where legacy (2025-11-25) clients reach this upstream. */
  legacyDoor: PassThrough;
  /** The URL, or the command line: for logs. */
  target: string;
  /** The stdio server processes (upstream.command only). */
  processes: UpstreamLink["processes"];
  /** Which protocol the backend speaks (probed with upstream.protocol: auto). */
  era: BackendEra;
  /** The backend spoken to in 2026-07-28 (HTTP backends; used while the era is modern). */
  modernLink: ModernLink | undefined;
  /** The readiness check: the upstream answers a ping (legacy) or server/discover (modern); says which era it found. */
  answers(): Promise<{ era: string }>;
  /** Closes the upstream sessions a crashed process left (whose instance `isAlive` no longer is). */
  closeLeftovers(isAlive: (instanceId: string) => Promise<boolean>): void;
  /** Logs at once when the upstream cannot be reached (taskgate serves anyway; /readyz says 503). */
  reportUnavailable(): void;
  close(): Promise<void>;
}

export interface UpstreamSideDeps {
  log: Logger;
  /** Told of every upstream failure, notification and cancel. */
  metrics: {
    upstreamFailed(reason: UpstreamReason): void;
    upstreamNotification(method: string): void;
    upstreamCancel(outcome: CancelOutcome): void;
    upstreamPing(outcome: PingOutcome): void;
  };
  /** Where the upstream session ids this instance holds are kept. */
  ledger: SessionLedger;
  /** Legacy sessions are bound to the identity that opened them (the legacy door authenticates). */
  bindLegacySessions: boolean;
  /** tasks.ttlMs: how long the legacy door follows a modern backend's task for an old client. */
  followTaskMs: number;
}

export function openUpstreamSide(options: UpstreamOptions, deps: UpstreamSideDeps): UpstreamSide {
  const { log, metrics, ledger } = deps;
  const events = new UpstreamEvents();
  const credentials = new UpstreamCredentials({
    headers: options.headers,
    forwardAuthorization: options.forwardAuthorization,
    ...(options.subjectHeader ? { subjectHeader: options.subjectHeader } : {}),
  });
  const link = openUpstreamLink(options, log, credentials, READINESS_OWNER);
  const { modernLink, era } = openEra(options, link, credentials, deps);
  const pool = new UpstreamPool({
    connect: (owner, profileKey) => link.connect(owner, profileKey),
    sessionsPer: options.sessionsPer,
    log,
    clientInfo: { name: "taskgate", version: "0.1.0" },
    maxSessions: link.maxSessions,
    maxSessionsOption: link.maxSessionsOption,
    sessionsAre: link.sessionsAre,
    sessionIdleMs: options.sessionIdleMs,
    requestTimeoutMs: options.requestTimeoutMs,
    timeouts: {
      initializeTimeoutMs: options.initializeTimeoutMs,
      pingIntervalMs: options.pingIntervalMs,
      pingTimeoutMs: options.pingTimeoutMs,
      cancelAttempts: options.cancelAttempts,
      cancelRetryMs: options.cancelRetryMs,
    },
    maxCallsPerSession: options.maxCallsPerSession,
    onCancel: (outcome) => metrics.upstreamCancel(outcome),
    onPing: (outcome) => metrics.upstreamPing(outcome),
    onNotification: (owner, profileKey, notification) => {
      metrics.upstreamNotification(notification.method);
      events.feed(owner, profileKey, notification);
    },
    onSessionOpened: (owner, profileKey, sessionId) => {
      if (sessionId) ledger.add(sessionId);
      events.sessionOpened(owner, profileKey);
    },
    onSessionClosed: (_owner, _profileKey, sessionId) => {
      if (sessionId) ledger.remove(sessionId);
    },
    onFailure: (reason) => metrics.upstreamFailed(reason),
  });
  // A legacy-door session at the process bound may take the place of an idle pool session.
  if (link.processes) link.processes.makeRoom = () => pool.evictIdle();
  const catalog = new UpstreamCatalog(pool);
  events.onAnyListChanged((kind, profileKey) => {
    if (kind === "tools") catalog.invalidate(profileKey);
  });
  const legacyDoor = openEraAwareDoor(options, openLegacyDoor(options, link, credentials, deps), { era, modernLink, credentials }, deps);
  const answers = async () => {
    // Each readiness probe asks the backend its era again: an upgrade is seen without any client request.
    const probe = options.protocol === "legacy" || !modernLink ? era.resolve() : era.probeNow("readiness");
    const found = await upstreamAnswers(probe, options.forwardAuthorization);
    if (!found) return { era: era.current?.era ?? "unknown" }; // refused taskgate's own (absent) token: it answers
    if (found.era === "legacy") await upstreamAnswers(pool.check(READINESS_OWNER), options.forwardAuthorization);
    return { era: found.era };
  };
  return {
    pool,
    catalog,
    events,
    credentials,
    era,
    modernLink,
    legacyDoor,
    target: link.target,
    processes: link.processes,
    answers,
    closeLeftovers: (isAlive) => closeLeftovers(link, ledger, isAlive, log),
    reportUnavailable: () =>
      void answers().catch((error: unknown) => {
        const failure = toClientError(error);
        log.warn(
          {
            event: "upstream.unavailable",
            upstream: link.target,
            reason: (failure.data as { reason?: string } | undefined)?.reason,
            err: failure.message,
          },
          "upstream does not answer yet; /readyz is 503 until it does",
        );
      }),
    async close() {
      await closeQuietly(log, "upstream sessions", () => pool.close());
      await closeQuietly(log, "legacy door", () => legacyDoor.close());
      await closeQuietly(log, "upstream connections", () => link.close());
      if (modernLink) await closeQuietly(log, "modern backend connections", () => modernLink.close());
    },
  };
}

/** The backend spoken to in 2026-07-28 (HTTP backends) and the finding of its era. */
function openEra(options: UpstreamOptions, link: UpstreamLink, credentials: UpstreamCredentials, deps: UpstreamSideDeps) {
  const { log, metrics } = deps;
  const modernLink = link.url
    ? new ModernLink({
        url: link.url,
        connectTimeoutMs: options.connectTimeoutMs,
        connections: options.connections,
        requestTimeoutMs: options.requestTimeoutMs,
        credentialsOf: options.forwardAuthorization ? "caller" : "taskgate",
        onFailure: (reason) => metrics.upstreamFailed(reason),
      })
    : undefined;
  const era = new BackendEra({
    setting: options.protocol,
    ...(modernLink ? { link: modernLink } : {}),
    headers: () => credentials.headersFor(READINESS_OWNER),
    log,
  });
  return { modernLink, era };
}

/** In front of a modern backend, the legacy door serves the session protocol itself (old clients). */
function openEraAwareDoor(
  options: UpstreamOptions,
  passThrough: PassThrough,
  parts: { era: BackendEra; modernLink: ModernLink | undefined; credentials: UpstreamCredentials },
  deps: UpstreamSideDeps,
): PassThrough {
  if (!parts.modernLink) return passThrough;
  return eraAwareLegacyDoor(passThrough, {
    era: parts.era,
    link: parts.modernLink,
    credentials: parts.credentials,
    bindSessions: deps.bindLegacySessions,
    maxSessions: options.maxSessions,
    sessionIdleMs: options.sessionIdleMs,
    answerTimeoutMs: options.requestTimeoutMs,
    followTaskMs: deps.followTaskMs,
    log: deps.log,
  });
}

/** The legacy door: a stdio bridge in front of server processes of its own, or the HTTP pass-through. */
function openLegacyDoor(options: UpstreamOptions, link: UpstreamLink, credentials: UpstreamCredentials, deps: UpstreamSideDeps) {
  const { log, bindLegacySessions: bindSessions } = deps;
  return link.processes
    ? createStdioBridge({
        processes: link.processes,
        idleMs: options.sessionIdleMs,
        sendTimeoutMs: options.requestTimeoutMs,
        bindSessions,
        log,
      })
    : createPassThrough(link.url as string, log, { credentials, bindSessions, connectTimeoutMs: options.connectTimeoutMs });
}

/** The readiness check of the upstream. When the upstream checks the callers' own tokens
 *  (forwardAuthorization), taskgate has none to show it: a 401/403 then proves it answers. */
async function upstreamAnswers<T>(check: Promise<T>, forwardsCallerTokens: boolean): Promise<T | undefined> {
  try {
    return await check;
  } catch (error) {
    if (forwardsCallerTokens && error instanceof UpstreamFailure && error.reason === "upstream_auth") return undefined;
    throw error;
  }
}

/** Upstream sessions a crashed process left are closed, so the upstream stops their calls. */
function closeLeftovers(link: UpstreamLink, ledger: SessionLedger, isAlive: (id: string) => Promise<boolean>, log: Logger): void {
  void ledger
    .takeLeftovers(isAlive)
    .then(async (leftovers) => {
      if (leftovers.length === 0) return;
      const closed = await link.closeLeftovers(leftovers);
      log.warn(
        { event: "upstream.sessions.recovered", left: leftovers.length, closed },
        "closed the upstream sessions a previous process left",
      );
    })
    .catch((error: unknown) =>
      log.warn(
        { event: "upstream.ledger.failed", err: error instanceof Error ? error.message : String(error) },
        "could not read the sessions a previous process left",
      ),
    );
}
