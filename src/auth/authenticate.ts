// authenticate: the one bearer check every door runs. In: the raw Authorization header value(s) (pass
// `req.headersDistinct.authorization`: Node keeps only the first of repeated Authorization headers
// in `req.headers`), the resolver, the scopes the door requires and the Protected Resource Metadata
// URL (when published). Out: the identity, or the HTTP answer for the refusal:
//
//   no Authorization header            401  missing_token          challenge without error (RFC 6750 §3.1)
//   another scheme (Basic, …)          401  unsupported_scheme     challenge without error (§3.1: unsupported method)
//   header sent twice                  400  duplicate_authorization  error="invalid_request"
//   "Bearer" with no token             400  empty_token            error="invalid_request"
//   "Bearer a b" (not one token)       400  malformed_authorization  error="invalid_request"
//   token refused by the resolver      401  invalid_token          error="invalid_token" + its description
//   token lacks a required scope       403  insufficient_scope     error="insufficient_scope", scope="…"
//   keys cannot be had right now       503  verifier_unavailable   no challenge: the token was not judged
//   the resolver threw (a bug)         503  verifier_error         fails closed
//
// `message` is for the client (never contains the token); `reason` is a short word for logs and
// `detail` what the operator needs (e.g. the JWKS URL and why it failed). Every challenge carries
// resource_metadata when a URL is given, and the required scopes when there are any (MCP clients
// use `scope` to choose what to ask the authorization server for). Never throws.

import { reasonMessage } from "../protocol/reasons.js";
import { bearerChallenge } from "./bearerChallenge.js";
import type { Identity, IdentityResolver, ResolveResult } from "./identity.js";
import { checkRequiredScopes } from "./requiredScopes.js";

export type AuthFailureReason =
  | "missing_token"
  | "unsupported_scheme"
  | "duplicate_authorization"
  | "empty_token"
  | "malformed_authorization"
  | "invalid_token"
  | "insufficient_scope"
  | "verifier_unavailable"
  | "verifier_error";

export interface AuthenticateInput {
  /** The Authorization header as received: undefined, one value, or every value when sent repeatedly. */
  authorization: string | readonly string[] | undefined;
  resolver: IdentityResolver;
  /** Scopes the door requires (auth.requiredScopes); [] = none. */
  requiredScopes: readonly string[];
  /** URL of the Protected Resource Metadata document, when taskgate publishes one. */
  resourceMetadataUrl?: string | undefined;
}

export type AuthenticateResult =
  | { ok: true; identity: Identity }
  | {
      ok: false;
      status: 400 | 401 | 403 | 503;
      /** Value of the WWW-Authenticate header to send (absent on 503). */
      wwwAuthenticate?: string;
      /** For the client. */
      message: string;
      /** For logs: a short machine word. */
      reason: AuthFailureReason;
      /** For logs: what the operator needs to know (never a token). */
      detail?: string;
    };

const SCHEME = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)(?:[ \t]+(.*))?$/;

/** The identity, or the refusal; at once when the resolver answers at once (demo, tokens), else a promise (jwt). */
export function authenticate(input: AuthenticateInput): AuthenticateResult | Promise<AuthenticateResult> {
  const { resolver, requiredScopes, resourceMetadataUrl } = input;
  const challenge = (error?: "invalid_request" | "invalid_token" | "insufficient_scope", errorDescription?: string) =>
    bearerChallenge({ resourceMetadata: resourceMetadataUrl, scope: requiredScopes, error, errorDescription });
  const refuse = (
    status: 400 | 401 | 403,
    reason: AuthFailureReason,
    message: string,
    withError?: "invalid_request" | "invalid_token" | "insufficient_scope",
  ) => ({ ok: false, status, reason, message, wwwAuthenticate: challenge(withError, withError ? message : undefined) }) as const;

  const values =
    input.authorization === undefined ? [] : typeof input.authorization === "string" ? [input.authorization] : [...input.authorization];
  if (values.length === 0) return refuse(401, "missing_token", "Authorization: Bearer <token> is required");
  if (values.length > 1) {
    return refuse(
      400,
      "duplicate_authorization",
      `the Authorization header was sent ${values.length} times: send it once`,
      "invalid_request",
    );
  }
  const header = (values[0] as string).trim();
  if (header === "") return refuse(401, "missing_token", "Authorization: Bearer <token> is required (the header is empty)");
  const match = SCHEME.exec(header);
  if (!match || (match[1] as string).toLowerCase() !== "bearer") {
    // The scheme name alone is safe to show: never the credentials after it.
    const scheme = match ? `'${(match[1] as string).slice(0, 20)}'` : "that is not an HTTP authentication scheme";
    return refuse(401, "unsupported_scheme", `the Authorization scheme ${scheme} is not supported: use Authorization: Bearer <token>`);
  }
  const token = (match[2] ?? "").trim();
  if (token === "") return refuse(400, "empty_token", "the Bearer token is empty: use Authorization: Bearer <token>", "invalid_request");
  if (/\s/.test(token)) {
    return refuse(
      400,
      "malformed_authorization",
      "the Authorization header must be 'Bearer <token>' with a token without spaces",
      "invalid_request",
    );
  }

  let resolved: ReturnType<IdentityResolver["resolve"]>;
  try {
    resolved = resolver.resolve(token);
  } catch (error) {
    return threw(resolver, error);
  }
  const judged = (result: ResolveResult): AuthenticateResult => {
    if (!result.ok) {
      if (result.error === "temporarily_unavailable") {
        return {
          ok: false,
          status: 503,
          reason: "verifier_unavailable",
          message: reasonMessage("verifier_unavailable"),
          detail: result.description,
        };
      }
      return refuse(401, "invalid_token", `the bearer token is not valid: ${result.description}`, "invalid_token");
    }
    const scopes = checkRequiredScopes(result.identity, requiredScopes);
    if (!scopes.ok) return refuse(403, "insufficient_scope", scopes.description, "insufficient_scope");
    return { ok: true, identity: result.identity };
  };
  return resolved instanceof Promise ? resolved.then(judged, (error: unknown) => threw(resolver, error)) : judged(resolved);
}

/** The resolver threw (a bug): fail closed, saying which resolver. */
function threw(resolver: IdentityResolver, error: unknown): AuthenticateResult {
  return {
    ok: false,
    status: 503,
    reason: "verifier_error",
    message: reasonMessage("verifier_error"),
    detail: `the ${resolver.mode} resolver threw: ${error instanceof Error ? error.message : String(error)}`,
  };
}
