// The front side of an instance: who the callers are (the identity resolver, and whether the legacy
// door checks them too), the one MCP endpoint (frontDoor: both doors), the side doors served by
// express (/livez, /readyz, /healthz, /metrics, the RFC 9728 metadata document) and the HTTP server
// they share. The endpoint, the hot path, skips express's router.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import type { Logger } from "pino";
import { createIdentityResolver } from "../auth/createIdentityResolver.js";
import type { IdentityResolver } from "../auth/identity.js";
import {
  buildResourceMetadata,
  metadataUrlFor,
  resourceIdentifier,
  resourceMetadataOptions,
  resourceMetadataWarning,
  wellKnownMetadataPaths,
} from "../auth/resourceMetadata.js";
import type { Config } from "../config/schema.js";
import { type FrontDoorOptions, frontDoor } from "../http/frontDoor.js";
import { type HealthOptions, mountHealth } from "../http/health.js";
import { mountMetrics } from "../http/metricsEndpoint.js";
import type { PassThrough } from "../http/passThrough.js";
import { RequestRate } from "../http/requestRate.js";
import type { MethodRouter } from "../methods/router.js";
import type { GatewayMetrics } from "../observability/metrics.js";
import type { UpstreamCredentials } from "../upstream/upstreamCredentials.js";

export interface Callers {
  resolver: IdentityResolver;
  /** The legacy door checks bearer tokens like the modern one. */
  legacyAuthenticates: boolean;
}

/** One identity on every door: the legacy door checks bearer tokens like the modern one unless it
 *  is left open on purpose (legacy.auth open) or the mode is demo (no real identities to check). */
export function openCallers(options: Pick<Config, "auth" | "legacy">, log: Logger): Callers {
  const resolver = createIdentityResolver(options.auth);
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

export interface FrontSideDeps {
  callers: Callers;
  router: MethodRouter;
  legacyDoor: PassThrough;
  credentials: UpstreamCredentials;
  metrics: GatewayMetrics;
  health: HealthOptions;
  log: Logger;
}

/** Answers every HTTP request: the MCP endpoint, or a side door. */
export type FrontSide = (req: IncomingMessage, res: ServerResponse) => void;

export function openFrontSide(options: FrontSideOptions, deps: FrontSideDeps): FrontSide {
  const { log, metrics } = deps;
  const app = express();
  app.disable("x-powered-by");
  mountHealth(app, deps.health);
  mountMetrics(app, metrics, log);
  // RFC 9728: where clients learn which authorization server issues tokens for this resource.
  const metadata = resourceMetadataOptions(options.auth);
  const metadataWarning = resourceMetadataWarning(metadata);
  if (metadataWarning) log.warn({ event: "auth.resource_metadata" }, metadataWarning);
  const resourceOf = (req: IncomingMessage) => resourceIdentifier(metadata!, `http://${req.headers.host ?? "localhost"}`, options.path);
  if (metadata) {
    for (const path of wellKnownMetadataPaths(options.path)) {
      app.get(path, (req, res) => {
        res.json(buildResourceMetadata(metadata, resourceOf(req)));
      });
    }
  }
  const doorOptions: FrontDoorOptions = {
    identity: deps.callers.resolver,
    requiredScopes: options.auth.requiredScopes,
    ...(metadata ? { resourceMetadataUrl: (req: IncomingMessage) => metadataUrlFor(resourceOf(req)) } : {}),
    router: deps.router,
    passThrough: deps.legacyDoor,
    legacy: {
      enabled: options.legacy.enabled,
      authenticate: deps.callers.legacyAuthenticates,
      ...(options.legacy.requiredScopes ? { requiredScopes: options.legacy.requiredScopes } : {}),
    },
    ...(options.requestsPerMinute !== undefined ? { rate: new RequestRate(options.requestsPerMinute) } : {}),
    onIdentified: (who, owner, authorization) => deps.credentials.remember(owner, who.subject, authorization),
    log,
    allowedOrigins: options.allowedOrigins,
    allowedHosts: options.allowedHosts,
    bodyLimitBytes: options.bodyLimitBytes,
    keepAliveMs: options.keepAliveMs,
    metrics,
  };
  const door = frontDoor(doorOptions);
  return (req, res) => {
    if (isEndpoint(req.url, options.path)) door(req, res).catch((error: unknown) => failedRequest(log, res, error));
    else app(req, res);
  };
}

/** The HTTP server of `front`, listening; `url` is the MCP endpoint's. */
export async function listenHttp(
  options: Pick<Config, "http" | "port" | "host" | "path">,
  front: FrontSide,
): Promise<{ server: Server; port: number; url: string }> {
  const server = createServer(
    {
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

/** Whether a request URL (path and query) is the MCP endpoint. */
function isEndpoint(url: string | undefined, path: string): boolean {
  if (url === undefined || !url.startsWith(path)) return false;
  const next = url.charCodeAt(path.length);
  return Number.isNaN(next) || next === 63 /* ? */;
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
