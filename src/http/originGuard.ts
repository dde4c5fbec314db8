// checkOriginAndHost: DNS-rebinding protection for every front-door request (2026-07-28 §4.1).
// Contract: `Host` (if present) must name a loopback host (localhost, 127.x.x.x, [::1]; any port) or
// be listed in allowed.hosts (full host or hostname, case-insensitive); `Origin` (if present) must be
// an http(s) origin whose hostname is loopback or which is listed verbatim in allowed.origins.
// Returns undefined when acceptable, else which header was refused, its value (for the log) and an
// InvalidRequest RpcError with HTTP 403. Never throws.

import { invalidRequest, type RpcError } from "../protocol/errors.js";
import { clip, getHeader, type HeaderMap } from "../protocol/headerValue.js";

export interface AllowedOriginsAndHosts {
  origins: string[];
  hosts: string[];
}

export interface Refusal {
  header: "Host" | "Origin";
  value: string;
  error: RpcError;
}

export function checkOriginAndHost(headers: HeaderMap, allowed: AllowedOriginsAndHosts): Refusal | undefined {
  const host = getHeader(headers, "host");
  if (host !== undefined && !isAllowedHost(host, allowed.hosts)) {
    return refusal("Host", host, "allowedHosts");
  }
  const origin = getHeader(headers, "origin");
  if (origin !== undefined && !isAllowedOrigin(origin, allowed.origins)) {
    return refusal("Origin", origin, "allowedOrigins");
  }
  return undefined;
}

function isLoopbackHostname(hostname: string): boolean {
  const name = hostname.toLowerCase();
  if (name === "localhost" || name === "[::1]" || name === "::1") return true;
  const octets = name.split(".");
  return octets.length === 4 && octets[0] === "127" && octets.every(isOctet);
}

function isOctet(part: string): boolean {
  return /^\d{1,3}$/.test(part) && Number(part) <= 255;
}

/** Host values already judged, per allowedHosts list: clients send the same Host on every request. Bounded. */
const judgedHosts = new WeakMap<string[], Map<string, boolean>>();
const JUDGED_HOSTS_MAX = 256;

function isAllowedHost(host: string | string[], allowedHosts: string[]): boolean {
  if (Array.isArray(host)) return false;
  let judged = judgedHosts.get(allowedHosts);
  const known = judged?.get(host);
  if (known !== undefined) return known;
  const allowed = judgeHost(host, allowedHosts);
  if (!judged) judgedHosts.set(allowedHosts, (judged = new Map()));
  if (judged.size >= JUDGED_HOSTS_MAX) judged.clear();
  judged.set(host, allowed);
  return allowed;
}

function judgeHost(host: string, allowedHosts: string[]): boolean {
  const full = host.trim().toLowerCase();
  const hostname = hostnameOf(full);
  if (hostname === undefined) return false;
  if (isLoopbackHostname(hostname)) return true;
  const listed = allowedHosts.map((h) => h.toLowerCase());
  return listed.includes(full) || listed.includes(hostname);
}

/** "name[:port]" or "[v6][:port]" ⇒ the name part; undefined when malformed. */
function hostnameOf(host: string): string | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[^\s:/[\]@]+)(?::(\d{1,5}))?$/.exec(host);
  return match?.[1];
}

function isAllowedOrigin(origin: string | string[], allowedOrigins: string[]): boolean {
  if (Array.isArray(origin)) return false;
  const url = parseHttpOrigin(origin.trim());
  if (url === undefined) return false;
  return isLoopbackHostname(url.hostname) || allowedOrigins.includes(origin.trim());
}

/** An http(s) URL that is exactly an origin (no path, query, fragment or credentials). */
function parseHttpOrigin(origin: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  const bare = !url.username && !url.password && url.pathname === "/" && !url.search && !url.hash;
  return bare && !origin.endsWith("#") && !origin.endsWith("?") ? url : undefined;
}

function refusal(header: "Host" | "Origin", value: string | string[], option: string): Refusal {
  const shown = Array.isArray(value) ? `${value.length} values` : `'${clip(value)}'`;
  const error = invalidRequest(
    `Forbidden: ${header} ${shown} is not allowed (DNS-rebinding protection); add it to ${option} to permit it`,
    403,
  );
  return { header, value: clip(Array.isArray(value) ? value.join(", ") : value), error };
}
