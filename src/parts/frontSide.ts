// The front side of an instance: who the callers are (the identity resolver, and whether the legacy
// door checks them too), the one MCP endpoint (frontDoor: both doors), the side doors served by
// express (/livez, /readyz, /healthz, /metrics, the RFC 9728 metadata document, the web console's
// files) and the HTTP server they share. The endpoint, the hot path, skips express's router.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import type { Logger } from "pino";
import { createIdentityResolver } from "../auth/createIdentityResolver.js";
import type { Identity, IdentityResolver } from "../auth/identity.js";
import {
  buildResourceMetadata,
  metadataUrlFor,
  resourceIdentifier,
  resourceMetadataOptions,
  resourceMetadataWarning,
  wellKnownMetadataPaths,
} from "../auth/resourceMetadata.js";
import type { Config } from "../config/schema.js";
import { type ConsoleSettings, type ConsoleSiteOptions, mountConsole } from "../http/consoleSite.js";
import { type FrontDoorOptions, frontDoor, type RequestObserver } from "../http/frontDoor.js";
import { type HealthOptions, mountHealth } from "../http/health.js";
import { type MetricsSource, mountMetrics } from "../http/metricsEndpoint.js";
import type { PassThrough } from "../http/passThrough.js";
import { RequestIdResponse } from "../http/requestIdResponse.js";
import { RequestRate } from "../http/requestRate.js";
import type { MethodRouter } from "../methods/router.js";
import type { UpstreamCredentials } from "../upstream/upstreamCredentials.js";

export interface Callers {
  resolver: IdentityResolver;
  /** The legacy door checks bearer tokens like the modern one. */
  legacyAuthenticates: boolean;
}

/** One identity on every door: the legacy door checks bearer tokens like the modern one unless it
 *  is left open on purpose (legacy.auth open) or the mode is demo (no real identities to check). */
export async function openCallers(options: Pick<Config, "auth" | "legacy">, log: Logger): Promise<Callers> {
  const resolver = await createIdentityResolver(options.auth);
  const { legacy } = options;
  if (resolver.mode === "demo") {
    log.warn({ event: "auth.demo" }, "auth mode 'demo': the bearer token is taken as the user's name; never use this in production");
  }
  const legacyAuthenticates = legacy.enabled && legacy.auth === "required" && resolver.mode !== "demo";
  if (legacy.enabled && !legacyAuthenticates && resolver.mode !== "demo") {
    log.warn({ event: "auth.legacy_open" }, "legacy.auth 'open': legacy (2025-11-25) clients reach the upstream without authenticating");
  }
  return { resolver, legacyAuthenticates };
}

export type FrontSideOptions = Pick<Config, "path" | "auth" | "legacy" | "allowedOrigins" | "allowedHosts" | "bodyLimitBytes"> & {
  requestsPerMinute?: number | undefined;
  /** SSE keep-alive comments (subscriptions.keepAliveMs). */
  keepAliveMs: number;
};

/** What one MCP endpoint is made of: its methods, its legacy door, its counts and log. */
export interface DoorParts {
  router: Pick<MethodRouter, "dispatch">;
  /** Where its legacy clients go; undefined: it has none (legacy requests are refused, -32022). */
  legacyDoor?: PassThrough | undefined;
  /** Read per request: the legacy door is closed now (access rules or approvals apply to this upstream). */
  legacyClosed?: (() => boolean) | undefined;
  /** Without a legacy door (a federated endpoint): the paths whose doors take old clients, read per request. */
  legacyElsewhere?: (() => readonly string[]) | undefined;
  /** Told who each request is from (what the upstream sees of the caller); a federated endpoint tells every member's. */
  credentials?: Pick<UpstreamCredentials, "remember"> | undefined;
  metrics: RequestObserver;
  log: Logger;
  /** In a fleet: the endpoint's path (tasks made there answer only there). */
  endpoint?: string | undefined;
}

/** One MCP endpoint, both doors. */
export type Door = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** Makes the MCP endpoints of an instance: one identity check, one request rate and one metadata document for all. */
export interface Doors {
  open(parts: DoorParts): Door;
  /** quotas.requestsPerMinute's buckets, shared with the inventory and approvals routes (one rate per identity). */
  readonly rate?: RequestRate | undefined;
  /** RFC 9728 metadata, when published: mounted at the well-known paths of `path`. */
  mountMetadata(app: express.Express): void;
}

const NO_LEGACY_DOOR: PassThrough = {
  handle: () => undefined,
  isKnownSession: () => false,
  close: async () => undefined,
};

export function openDoors(options: FrontSideOptions, callers: Callers, log: Logger): Doors {
  // RFC 9728: where clients learn which authorization server issues tokens for this resource.
  const metadata = resourceMetadataOptions(options.auth);
  const metadataWarning = resourceMetadataWarning(metadata);
  if (metadataWarning) log.warn({ event: "auth.resource_metadata" }, metadataWarning);
  const resourceOf = (req: IncomingMessage) => resourceIdentifier(metadata!, `http://${req.headers.host ?? "localhost"}`, options.path);
  const rate = options.requestsPerMinute !== undefined ? new RequestRate(options.requestsPerMinute) : undefined;
  return {
    rate,
    open(parts) {
      const doorOptions: FrontDoorOptions = {
        identity: callers.resolver,
        requiredScopes: options.auth.requiredScopes,
        ...(metadata ? { resourceMetadataUrl: (req: IncomingMessage) => metadataUrlFor(resourceOf(req)) } : {}),
        router: parts.router,
        passThrough: parts.legacyDoor ?? NO_LEGACY_DOOR,
        legacy: {
          enabled: options.legacy.enabled && parts.legacyDoor !== undefined,
          authenticate: callers.legacyAuthenticates,
          ...(options.legacy.requiredScopes ? { requiredScopes: options.legacy.requiredScopes } : {}),
          ...(parts.legacyClosed ? { closed: parts.legacyClosed } : {}),
          ...(parts.legacyElsewhere && options.legacy.enabled ? { elsewhere: parts.legacyElsewhere } : {}),
        },
        ...(rate ? { rate } : {}),
        ...(parts.credentials
          ? {
              onIdentified: (who: Identity, owner: string, authorization: string | undefined) =>
                parts.credentials?.remember(owner, who.subject, authorization),
            }
          : {}),
        log: parts.log,
        allowedOrigins: options.allowedOrigins,
        allowedHosts: options.allowedHosts,
        bodyLimitBytes: options.bodyLimitBytes,
        keepAliveMs: options.keepAliveMs,
        metrics: parts.metrics,
        ...(parts.endpoint !== undefined ? { endpoint: parts.endpoint } : {}),
      };
      return frontDoor(doorOptions);
    },
    mountMetadata(app) {
      if (!metadata) return;
      for (const path of wellKnownMetadataPaths(options.path)) {
        app.get(path, (req, res) => {
          res.json(buildResourceMetadata(metadata, resourceOf(req)));
        });
      }
    },
  };
}

export interface FrontSideDeps {
  doors: Doors;
  /** The MCP endpoint a request path (without its query) goes to, if any; read per request. */
  endpointAt(path: string): Door | undefined;
  metrics: MetricsSource;
  health: HealthOptions;
  log: Logger;
  /** More side doors (a fleet's reload status). */
  mount?: (app: express.Express) => void;
  /** The web console's files (console.enabled). */
  console?: ConsoleSiteOptions | undefined;
}

/** Answers every HTTP request: an MCP endpoint, or a side door. */
export type FrontSide = (req: IncomingMessage, res: ServerResponse) => void;

export function openFrontSide(deps: FrontSideDeps): FrontSide {
  const { log } = deps;
  const app = express();
  app.disable("x-powered-by");
  mountHealth(app, deps.health);
  mountMetrics(app, deps.metrics, log);
  deps.doors.mountMetadata(app);
  if (deps.console) mountConsole(app, deps.console);
  deps.mount?.(app);
  return (req, res) => {
    const door = deps.endpointAt(pathOf(req.url));
    if (!door) return app(req, res);
    try {
      door(req, res)?.catch((error: unknown) => failedRequest(log, res, error));
    } catch (error) {
      failedRequest(log, res, error);
    }
  };
}

/** The console's site (undefined when console.enabled is false): the OAuth sign-in is offered in jwt mode
 *  with a client id and a known authorization server, whose origins the page may then fetch from. */
export function consoleSiteOf(config: Pick<Config, "console" | "auth" | "path">): ConsoleSiteOptions | undefined {
  if (!config.console.enabled) return undefined;
  const metadata = resourceMetadataOptions(config.auth);
  const { oauthClientId } = config.console;
  const servers = metadata?.authorizationServers ?? [];
  const oauth = config.auth.mode === "jwt" && oauthClientId !== undefined && servers.length > 0;
  const settings: ConsoleSettings = {
    authMode: config.auth.mode,
    ...(metadata ? { resourceMetadata: wellKnownMetadataPaths(config.path)[0] as string } : {}),
    ...(oauth ? { oauth: { clientId: oauthClientId, scope: (config.console.oauthScopes ?? config.auth.requiredScopes).join(" ") } } : {}),
  };
  return { settings, connectOrigins: oauth ? [...new Set(servers.map((server) => new URL(server).origin))] : [] };
}

/** A request URL's path, without its query. */
function pathOf(url: string | undefined): string {
  if (url === undefined) return "";
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

/** The HTTP server of `front`, listening; `url` is the MCP endpoint's. */
export async function listenHttp(
  options: Pick<Config, "http" | "port" | "host" | "path">,
  front: FrontSide,
): Promise<{ server: Server; port: number; url: string }> {
  const server = createServer(
    {
      ServerResponse: RequestIdResponse,
      headersTimeout: options.http.headersTimeoutMs,
      requestTimeout: options.http.requestTimeoutMs,
      keepAliveTimeout: options.http.keepAliveTimeoutMs,
      // How often Node looks for clients past those limits (its default is 30 s).
      connectionsCheckingInterval: Math.min(1_000, options.http.headersTimeoutMs),
    },
    front,
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return { server, port, url: `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}${options.path}` };
}

/** A request the front door could not answer (a bug): logged with its stack, answered 500. */
function failedRequest(log: Logger, res: ServerResponse, error: unknown): void {
  log.error({ event: "request.crashed", err: error }, "front door crashed");
  if (!res.headersSent)
    res
      .writeHead(500, { "Content-Type": "application/json" })
      .end('{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}');
  else res.destroy();
}
