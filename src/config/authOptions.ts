// The identity options, declared once: the mode, token hashes, required scopes, JWT verification
// (mode "jwt") and the OAuth Protected Resource Metadata (RFC 9728) taskgate publishes.

import { z } from "zod";
import { option, section } from "./declaration.js";
import { LOOPBACK_HOSTS, scopeToken, timerMs } from "./values.js";

/** Asymmetric JWS algorithms taskgate verifies. HS* (shared secret) and "none" are never accepted. */
export const JWT_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

const JWKS_URL_RULE = "must be https (plain http is accepted only on a loopback host: keys fetched over http can be replaced in transit)";

const JwtFields = z
  .object({
    jwksUrl: option(
      z
        .url({ protocol: /^https?$/, error: "must be an http(s) URL of the authorization server's JWKS" })
        .refine((url) => url.startsWith("https:") || LOOPBACK_HOSTS.has(new URL(url).hostname), { message: JWKS_URL_RULE })
        .optional(),
      {
        help: "the authorization server's JWKS (https, or http on a loopback host); exactly one of jwksUrl and publicKey",
        details: "Cached; fetched again for an unknown key id (at most every `jwksCooldownMs`).",
        defaultText: "none; in jwt mode this or publicKey",
      },
    ),
    publicKey: option(z.string().min(1).optional(), {
      help: 'one fixed verification key: PEM "BEGIN PUBLIC KEY" (SPKI) or one JWK as a JSON string',
      defaultText: "none; in jwt mode this or jwksUrl",
    }),
    issuer: option(z.string().min(1), { help: "the `iss` every token must carry", defaultText: "required in jwt mode" }),
    audience: option(
      z.preprocess((value) => (typeof value === "string" ? [value] : value), z.array(z.string().min(1)).min(1)),
      {
        help: "accepted `aud` values, usually the MCP endpoint's public URL: a token must name at least one",
        details: "One string or a list in the file.",
        defaultText: "required in jwt mode",
      },
    ),
    algorithms: option(
      z
        .array(
          z.enum(JWT_ALGORITHMS, {
            error: `must be one of ${JWT_ALGORITHMS.join(", ")} (HS* shared-secret algorithms and "none" are not accepted)`,
          }),
        )
        .min(1)
        .default([...JWT_ALGORITHMS]),
      { help: "accepted signature algorithms (asymmetric only: HS* and none are refused)" },
    ),
    clockToleranceSec: option(z.number().int().min(0).max(300).default(30), {
      help: "clock skew allowed on exp and nbf, in seconds (0 to 300)",
    }),
    subjectClaim: option(z.string().min(1).default("sub"), {
      help: "the top-level claim naming the caller (a string; dots are part of the name, not a path)",
    }),
    jwksTimeoutMs: option(timerMs.positive().default(5000), {
      help: "longest wait for the JWKS endpoint (the request is then HTTP 503)",
    }),
    jwksCooldownMs: option(timerMs.min(0).default(30_000), {
      help: "after a JWKS fetch, an unknown key id does not trigger another fetch for this long",
    }),
    verifiedCacheMs: option(timerMs.min(0).default(60_000), {
      help: "a verified token is accepted again for this long without a signature check (never past its `exp`); 0 checks every request",
      details:
        "A signature check costs more CPU than the rest of a quick call. At most 10,000 tokens are remembered, the oldest " +
        "forgotten first. A key taken out of the JWKS stops verifying new tokens once the JWKS is fetched again (jose keeps " +
        "it up to 10 minutes); a token it verified is accepted until its entry here ends.",
    }),
  })
  .strict();

export const JwtSchema = section(
  JwtFields.superRefine((jwt, ctx) => {
    if ((jwt.jwksUrl === undefined) === (jwt.publicKey === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["jwksUrl"],
        message: "set exactly one of auth.jwt.jwksUrl (keys fetched from the authorization server) and auth.jwt.publicKey (one fixed key)",
      });
    }
  }),
  { help: "In mode jwt: how OAuth access tokens are verified (required exactly in that mode)." },
);

export const ResourceMetadataSchema = section(
  z
    .object({
      resource: option(
        z
          .url({ protocol: /^https?$/, error: "must be the public http(s) URL of taskgate's MCP endpoint" })
          .refine((url) => !url.includes("#"), { message: "must not contain a fragment (RFC 9728 §1.2)" })
          .optional(),
        {
          help: "the protected resource identifier: the public URL of the MCP endpoint (set it behind a proxy)",
          defaultText: "the endpoint's URL as requested",
        },
      ),
      authorizationServers: option(z.array(z.url({ error: "must be the issuer URL of an authorization server" })).default([]), {
        help: "issuer identifiers of the authorization servers clients get tokens from",
        defaultText: "none; in jwt mode [auth.jwt.issuer]",
      }),
      scopesSupported: option(z.array(scopeToken).optional(), { help: "`scopes_supported` of the metadata" }),
      resourceName: option(z.string().min(1).optional(), { help: "`resource_name` of the metadata: a human-readable name" }),
    })
    .strict(),
  // Its variables are TASKGATE_AUTH_RESOURCE, TASKGATE_AUTH_AUTHORIZATION_SERVERS, …: no segment of its own.
  { help: "OAuth Protected Resource Metadata (RFC 9728): published whenever set, and always in mode jwt.", env: "" },
);

const AUTH_MODE_MESSAGE =
  "auth.mode must be chosen explicitly: 'demo' (token = user name, development only), 'tokens' (configured token hashes) " +
  "or 'jwt' (OAuth access tokens)";

const TokenSchema = z
  .object({
    /** sha256 hex of the bearer token (the token itself is never stored). */
    sha256: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex characters (sha256 of the token)"),
    subject: z.string().min(1),
    /** Scopes this token grants (checked against auth.requiredScopes); none when unset. */
    scopes: z.array(scopeToken).optional(),
  })
  .strict();

const AuthFields = z
  .object({
    mode: option(z.enum(["demo", "tokens", "jwt"], { error: AUTH_MODE_MESSAGE }), {
      help: "identity mode",
      details:
        "`tokens`: bearer tokens checked against the sha256 hashes in `auth.tokens`; `jwt`: OAuth access tokens verified " +
        "as `auth.jwt` says; `demo`: the bearer token is the user name (development only, never in production).",
      flag: "--auth <mode>",
    }),
    tokens: option(z.array(TokenSchema).default([]), {
      help: "[{sha256, subject, scopes?}]: the sha256 (64 lowercase hex) of each accepted token, who it is, what scopes it grants",
      details: "At least one in `tokens` mode, no duplicates. `taskgate hash-token` prints the sha256 of a token.",
      read: "tokens",
    }),
    jwt: JwtSchema.optional(),
    requiredScopes: option(z.array(scopeToken).default([]), {
      help: "scopes every request's token must carry (HTTP 403 insufficient_scope otherwise)",
    }),
    resourceMetadata: ResourceMetadataSchema.optional(),
  })
  .strict();

type AuthFields = z.infer<typeof AuthFields>;

function checkAuth(auth: AuthFields, ctx: z.RefinementCtx): void {
  if (auth.mode === "tokens" && auth.tokens.length === 0) {
    ctx.addIssue({ code: "custom", path: ["tokens"], message: "mode 'tokens' needs at least one token" });
  }
  if (auth.mode === "jwt" && auth.jwt === undefined) {
    ctx.addIssue({ code: "custom", path: ["jwt"], message: "mode 'jwt' needs auth.jwt: issuer, audience, and jwksUrl or publicKey" });
  }
  if (auth.mode !== "jwt" && auth.jwt !== undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["jwt"],
      message: `is only used with mode 'jwt' but auth.mode is '${auth.mode}': set auth.mode to jwt or remove auth.jwt`,
    });
  }
  const seen = new Set<string>();
  auth.tokens.forEach((token, index) => {
    if (seen.has(token.sha256)) {
      ctx.addIssue({
        code: "custom",
        path: ["tokens", index, "sha256"],
        message: "duplicate token hash (each token must map to exactly one subject)",
      });
    }
    seen.add(token.sha256);
  });
}

export const AuthSchema = section(AuthFields.superRefine(checkAuth), {
  help: "Who a caller is: the identity mode and what it checks. Required: auth.mode has no default.",
});
