// resourceMetadata: OAuth 2.0 Protected Resource Metadata (RFC 9728) for taskgate's MCP endpoint.
// - resourceMetadataOptions(auth): the effective options, or undefined when taskgate publishes none
//   (published when auth.resourceMetadata is set, and always in mode "jwt", where the authorization
//   servers default to [auth.jwt.issuer] — the MCP authorization spec requires at least one).
// - resourceIdentifier(): auth.resourceMetadata.resource, else the endpoint's public URL (base URL
//   of the request + MCP path). Behind a proxy, configure `resource`: a Host header is not a source
//   of truth.
// - buildResourceMetadata(): the JSON document: resource, authorization_servers (omitted when none are
//   known: resourceMetadataWarning says so), bearer_methods_supported ["header"] (the token is only
//   read from the Authorization header), scopes_supported and resource_name when configured.
// - metadataUrlFor(resource) / wellKnownMetadataPaths(mcpPath): where the document lives (RFC 9728
//   §3.1: /.well-known/oauth-protected-resource inserted between host and path), and the local paths
//   to serve it on: the path-suffixed form for the MCP path, plus the bare form.

import type { Config } from "../config/schema.js";

export const WELL_KNOWN_PROTECTED_RESOURCE = "/.well-known/oauth-protected-resource";

export interface ResourceMetadataOptions {
  resource?: string | undefined;
  authorizationServers: string[];
  scopesSupported?: string[] | undefined;
  resourceName?: string | undefined;
}

export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers?: string[];
  bearer_methods_supported: ["header"];
  scopes_supported?: string[];
  resource_name?: string;
}

export function resourceMetadataOptions(
  auth: Pick<Config["auth"], "mode" | "jwt" | "resourceMetadata">,
): ResourceMetadataOptions | undefined {
  const configured = auth.resourceMetadata;
  if (auth.mode !== "jwt") return configured;
  const authorizationServers = configured?.authorizationServers.length
    ? configured.authorizationServers
    : auth.jwt
      ? [auth.jwt.issuer]
      : [];
  return { ...configured, authorizationServers };
}

/** A start-up warning when the document cannot tell clients where to get tokens. */
export function resourceMetadataWarning(options: ResourceMetadataOptions | undefined): string | undefined {
  if (options === undefined || options.authorizationServers.length > 0) return undefined;
  return (
    "auth.resourceMetadata.authorizationServers is empty: the Protected Resource Metadata names no authorization server, " +
    "so clients cannot discover where to get tokens"
  );
}

/** The resource identifier: configured, or the MCP endpoint's public URL (no query, no fragment). */
export function resourceIdentifier(options: ResourceMetadataOptions, publicBaseUrl: string, mcpPath: string): string {
  if (options.resource !== undefined) return options.resource;
  const url = new URL(mcpPath, publicBaseUrl);
  url.search = "";
  url.hash = "";
  return url.href;
}

export function buildResourceMetadata(options: ResourceMetadataOptions, resource: string): ProtectedResourceMetadata {
  const document: ProtectedResourceMetadata = { resource, bearer_methods_supported: ["header"] };
  if (options.authorizationServers.length > 0) document.authorization_servers = [...options.authorizationServers];
  if (options.scopesSupported !== undefined) document.scopes_supported = [...options.scopesSupported];
  if (options.resourceName !== undefined) document.resource_name = options.resourceName;
  return document;
}

/** RFC 9728 §3.1: the metadata URL of a resource — the well-known segment goes between host and path. */
export function metadataUrlFor(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === "/" ? "" : url.pathname;
  return `${url.origin}${WELL_KNOWN_PROTECTED_RESOURCE}${path}`;
}

/** Local paths to serve the document on for an MCP endpoint path: path-suffixed first, then the bare form. */
export function wellKnownMetadataPaths(mcpPath: string): string[] {
  const path = mcpPath === "/" ? "" : mcpPath;
  return path === "" ? [WELL_KNOWN_PROTECTED_RESOURCE] : [`${WELL_KNOWN_PROTECTED_RESOURCE}${path}`, WELL_KNOWN_PROTECTED_RESOURCE];
}
