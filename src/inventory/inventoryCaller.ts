// Who calls the inventory: the same checks as the MCP endpoint (Origin/Host, then the bearer token
// through authenticate(), with auth.requiredScopes, then quotas.requestsPerMinute from the MCP
// endpoint's own buckets, so both count against one rate per identity), answered in the
// inventory's error shape. A refusal is sent here; a caller that passes is returned with their
// owner hash and role.

import type { IncomingMessage, ServerResponse } from "node:http";
import { authenticate } from "../auth/authenticate.js";
import { type Identity, type IdentityResolver, loggableSubject, ownerHashOf } from "../auth/identity.js";
import type { InventoryOptions } from "../config/inventoryOptions.js";
import { checkOriginAndHost } from "../http/originGuard.js";
import type { RequestRate } from "../http/requestRate.js";
import { type InventoryError, inventoryError } from "../protocol/errors.js";
import { reasonMessage } from "../protocol/reasons.js";
import { isOperator } from "./operatorRole.js";

export interface Caller {
  identity: Identity;
  owner: string;
  /** How logs and operators see the caller. */
  name: string;
  operator: boolean;
}

export interface CallerChecks {
  identity: IdentityResolver;
  requiredScopes: readonly string[];
  resourceMetadataUrl?: ((req: IncomingMessage) => string) | undefined;
  operators: InventoryOptions["operators"];
  allowedOrigins: string[];
  allowedHosts: string[];
  /** quotas.requestsPerMinute: the MCP endpoint's buckets (undefined: no rate). */
  rate?: RequestRate | undefined;
}

/** Sends an inventory error (JSON, no-store). */
export function sendInventoryError(res: ServerResponse, error: InventoryError, headers: Record<string, string> = {}): void {
  sendInventoryJson(res, error.status, error.toJSON(), headers);
}

export function sendInventoryJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Cache-Control": "no-store",
    "Content-Length": String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** The caller, or undefined once the refusal is sent. */
export async function identifyCaller(req: IncomingMessage, res: ServerResponse, checks: CallerChecks): Promise<Caller | undefined> {
  const forbidden = checkOriginAndHost(req.headers, { origins: checks.allowedOrigins, hosts: checks.allowedHosts });
  if (forbidden) {
    sendInventoryError(res, inventoryError("forbidden", `${forbidden.header} ${JSON.stringify(forbidden.value)} is not allowed here`));
    return undefined;
  }
  const auth = await authenticate({
    authorization: req.headersDistinct.authorization,
    resolver: checks.identity,
    requiredScopes: checks.requiredScopes,
    ...(checks.resourceMetadataUrl ? { resourceMetadataUrl: checks.resourceMetadataUrl(req) } : {}),
  });
  if (!auth.ok) {
    const code =
      auth.status === 401 ? "unauthenticated" : auth.status === 403 ? "forbidden" : auth.status === 400 ? "bad_request" : "unavailable";
    sendInventoryError(res, inventoryError(code, auth.message), auth.wwwAuthenticate ? { "WWW-Authenticate": auth.wwwAuthenticate } : {});
    return undefined;
  }
  const { identity } = auth;
  const owner = ownerHashOf(identity);
  const rate = checks.rate?.take(owner);
  if (rate && !rate.ok) {
    const { retryAfterSeconds } = rate;
    const message = reasonMessage("rate_limited", { retryAfterSeconds });
    sendInventoryError(res, inventoryError("rate_limited", message), { "Retry-After": String(retryAfterSeconds) });
    return undefined;
  }
  return {
    identity,
    owner,
    name: loggableSubject(identity, checks.identity.mode),
    operator: isOperator(identity, checks.operators),
  };
}
