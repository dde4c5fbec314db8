// The configuration schema: one zod object, the single source of truth for every option,
// its default and what is allowed. Loading (file, env, flags) lives in loadConfig.ts.

import { z } from "zod";

export const TaskPolicy = z.enum(["never", "auto", "always", "required"]);
export type TaskPolicy = z.infer<typeof TaskPolicy>;

const positiveMs = z.number().int().positive();
/** Durations that become a setTimeout: Node fires at once past 2^31-1 ms (~24.8 days). */
const timerMs = z.number().int().max(2_147_483_647, "must be at most 2147483647 ms (~24.8 days)");

/** RFC 6749 §3.3 scope-token: printable ASCII without space, '"' or '\\'. */
const scopeToken = z
  .string()
  .regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, "a scope is printable ASCII without spaces, quotes or backslashes (RFC 6749 §3.3)");

/** RFC 9110 field-name (a token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_NAME_MESSAGE = "must be an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)";
const headerName = z.string().regex(HEADER_NAME, HEADER_NAME_MESSAGE);
/** A field value: visible ASCII, spaces and tabs (no CR/LF: no header injection). */
const headerValue = z.string().regex(/^[\t\x20-\x7E]*$/, "must be printable ASCII (no line breaks)");
/** Headers the upstream transport and the pass-through manage themselves. */
const RESERVED_UPSTREAM_HEADERS = new Set([
  "host",
  "content-length",
  "content-type",
  "accept",
  "connection",
  "transfer-encoding",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
]);

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

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

export const JwtSchema = z
  .object({
    /** URL of the authorization server's JWKS (https; http only on loopback). Exactly one of jwksUrl / publicKey. */
    jwksUrl: z
      .url({ protocol: /^https?$/, error: "must be an http(s) URL of the authorization server's JWKS" })
      .refine((url) => url.startsWith("https:") || LOOPBACK_HOSTS.has(new URL(url).hostname), {
        message: "must be https (plain http is accepted only on a loopback host: keys fetched over http can be replaced in transit)",
      })
      .optional(),
    /** A public key: PEM "BEGIN PUBLIC KEY" (SPKI) or one JWK as a JSON string. Exactly one of jwksUrl / publicKey. */
    publicKey: z.string().min(1).optional(),
    /** Required `iss` of every token. */
    issuer: z.string().min(1),
    /** Accepted `aud` value(s), usually the MCP endpoint's public URL: a token must name at least one. One string or a list. */
    audience: z.preprocess((value) => (typeof value === "string" ? [value] : value), z.array(z.string().min(1)).min(1)),
    /** Allowed `alg` values (asymmetric only). */
    algorithms: z
      .array(
        z.enum(JWT_ALGORITHMS, {
          error: `must be one of ${JWT_ALGORITHMS.join(", ")} (HS* shared-secret algorithms and "none" are not accepted)`,
        }),
      )
      .min(1)
      .default([...JWT_ALGORITHMS]),
    /** Allowed clock skew for exp/nbf, in seconds. */
    clockToleranceSec: z.number().int().min(0).max(300).default(30),
    /** Top-level claim holding the subject (a string). Dots are part of the name, not a path. */
    subjectClaim: z.string().min(1).default("sub"),
    /** Longest wait for the JWKS endpoint. */
    jwksTimeoutMs: timerMs.positive().default(5000),
    /** After a JWKS fetch, an unknown `kid` does not trigger another fetch for this long. */
    jwksCooldownMs: timerMs.min(0).default(30_000),
  })
  .strict()
  .superRefine((jwt, ctx) => {
    if ((jwt.jwksUrl === undefined) === (jwt.publicKey === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["jwksUrl"],
        message: "set exactly one of auth.jwt.jwksUrl (keys fetched from the authorization server) and auth.jwt.publicKey (one fixed key)",
      });
    }
  });

export const ResourceMetadataSchema = z
  .object({
    /** The protected resource identifier (the public URL of the MCP endpoint). Derived from the request when unset. */
    resource: z
      .url({ protocol: /^https?$/, error: "must be the public http(s) URL of taskgate's MCP endpoint" })
      .refine((url) => !url.includes("#"), { message: "must not contain a fragment (RFC 9728 §1.2)" })
      .optional(),
    /** Issuer identifiers of the authorization servers clients get tokens from. Mode "jwt" defaults to [auth.jwt.issuer]. */
    authorizationServers: z.array(z.url({ error: "must be the issuer URL of an authorization server" })).default([]),
    scopesSupported: z.array(scopeToken).optional(),
    /** Human-readable name of this resource. */
    resourceName: z.string().min(1).optional(),
  })
  .strict();

export const ConfigSchema = z
  .object({
    upstream: z
      .object({
        /** The legacy server's Streamable HTTP endpoint. Exactly one of url / command. */
        url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL of the legacy MCP endpoint" }).optional(),
        /** A legacy server that speaks stdio, as an argv list (no shell): taskgate starts one process
         *  per upstream session. Exactly one of url / command. */
        command: z.array(z.string().min(1, "an argument must not be empty")).min(1, "must name the program to start").optional(),
        /** Extra environment of the started server (it gets only HOME, LOGNAME, PATH, SHELL, TERM, USER of taskgate's own). */
        env: z.record(z.string(), z.string()).default({}),
        /** Working directory of the started server (default: taskgate's). */
        cwd: z.string().min(1).optional(),
        /** Upstream sessions at most (each identity and capability profile has its own). */
        maxSessions: z.number().int().positive().default(1000),
        /** upstream.command: server processes at most (one per upstream session, and one per legacy-door session). */
        maxProcesses: z.number().int().positive().default(100),
        /** upstream.command: stopping a process closes its stdin, waits this long, sends SIGTERM, waits again, then SIGKILL. */
        stopGraceMs: timerMs.positive().default(2_000),
        /** A session with nothing in flight and no holder is closed (DELETE) after this long. */
        sessionIdleMs: timerMs.positive().default(300_000),
        /** TCP connect to the upstream. */
        connectTimeoutMs: timerMs.positive().default(5_000),
        /** Opening a session: initialize, standalone stream, notifications/initialized. */
        initializeTimeoutMs: timerMs.positive().default(15_000),
        /** Short requests: lists, completion/complete, resource (un)subscribe, readiness pings. */
        requestTimeoutMs: timerMs.positive().default(30_000),
        /** While calls are in flight on a session, it is pinged this often. */
        pingIntervalMs: timerMs.positive().default(15_000),
        /** A ping unanswered this long: the upstream stopped answering; its calls fail. */
        pingTimeoutMs: timerMs.positive().default(10_000),
        /** Static headers on every request to the upstream (both doors). `${NAME}` in a value is the environment variable NAME (loadConfig). */
        headers: z.record(z.string(), headerValue).default({}),
        /** Send the caller's own Authorization header to the upstream unchanged (same trust domain only). */
        forwardAuthorization: z.boolean().default(false),
        /** Header that carries the caller's subject to the upstream (e.g. X-User); none when unset. */
        subjectHeader: headerName.optional(),
      })
      .strict()
      .superRefine((upstream, ctx) => {
        const names = Object.keys(upstream.headers).map((name) => name.toLowerCase());
        for (const name of Object.keys(upstream.headers)) {
          if (!HEADER_NAME.test(name)) ctx.addIssue({ code: "custom", path: ["headers", name], message: HEADER_NAME_MESSAGE });
          else if (RESERVED_UPSTREAM_HEADERS.has(name.toLowerCase())) {
            ctx.addIssue({
              code: "custom",
              path: ["headers", name],
              message: `'${name.toLowerCase()}' is set by taskgate itself and cannot be configured`,
            });
          }
        }
        if (upstream.forwardAuthorization && names.includes("authorization")) {
          ctx.addIssue({
            code: "custom",
            path: ["forwardAuthorization"],
            message: "forwards the caller's Authorization, but upstream.headers sets one too: choose one (never both by accident)",
          });
        }
        const subject = upstream.subjectHeader?.toLowerCase();
        if (subject !== undefined && (subject === "authorization" || RESERVED_UPSTREAM_HEADERS.has(subject) || names.includes(subject))) {
          ctx.addIssue({
            code: "custom",
            path: ["subjectHeader"],
            message: `'${upstream.subjectHeader}' is ${names.includes(subject) ? "also a static header in upstream.headers" : "a header taskgate or the caller's credentials use"}: choose another name`,
          });
        }
        if (upstream.url === undefined && upstream.command === undefined) {
          ctx.addIssue({
            code: "custom",
            path: ["url"],
            message: "is required but not set — set upstream.url (an http(s) endpoint) or upstream.command (a server started over stdio)",
          });
        }
        if (upstream.url !== undefined && upstream.command !== undefined) {
          ctx.addIssue({
            code: "custom",
            path: ["command"],
            message:
              "upstream.url and upstream.command are mutually exclusive: taskgate talks to one upstream, either over HTTP (url) or by starting it (command); remove one",
          });
        }
        if (upstream.command === undefined && (Object.keys(upstream.env).length > 0 || upstream.cwd !== undefined)) {
          ctx.addIssue({
            code: "custom",
            path: [upstream.cwd !== undefined ? "cwd" : "env"],
            message: "is only used with upstream.command (a server taskgate starts)",
          });
        }
        const credentialOptions = [
          Object.keys(upstream.headers).length > 0 ? "headers" : undefined,
          upstream.forwardAuthorization ? "forwardAuthorization" : undefined,
          upstream.subjectHeader !== undefined ? "subjectHeader" : undefined,
        ].filter((name) => name !== undefined);
        if (upstream.command !== undefined && credentialOptions.length > 0) {
          // A server taskgate starts over stdio sees no HTTP headers: these would silently do nothing.
          ctx.addIssue({
            code: "custom",
            path: [credentialOptions[0] as string],
            message:
              "is only used with upstream.url (HTTP headers towards the upstream); a stdio server gets its secrets through upstream.env",
          });
        }
      }),
    host: z.string().min(1).default("127.0.0.1"),
    port: z.number().int().min(0).max(65535).default(3000),
    /** Path of the MCP endpoint on taskgate. */
    path: z.string().startsWith("/").default("/mcp"),
    /** Largest accepted request body, in bytes. */
    bodyLimitBytes: z.number().int().positive().default(1_048_576),
    /** Extra Origin values accepted besides loopback ones (DNS-rebinding protection). */
    allowedOrigins: z.array(z.string()).default([]),
    /** Extra Host header values accepted besides loopback ones. */
    allowedHosts: z.array(z.string()).default([]),
    auth: z
      .object({
        mode: z.enum(["demo", "tokens", "jwt"], {
          error:
            "auth.mode must be chosen explicitly: 'demo' (token = user name, development only), 'tokens' (configured token hashes) or 'jwt' (OAuth access tokens)",
        }),
        tokens: z
          .array(
            z
              .object({
                /** sha256 hex of the bearer token (the token itself is never stored). */
                sha256: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex characters (sha256 of the token)"),
                subject: z.string().min(1),
                /** Scopes this token grants (checked against auth.requiredScopes); none when unset. */
                scopes: z.array(scopeToken).optional(),
              })
              .strict(),
          )
          .default([]),
        /** mode "jwt": how access tokens are verified. Required exactly when mode is "jwt". */
        jwt: JwtSchema.optional(),
        /** Scopes every request's token must carry (403 insufficient_scope otherwise). */
        requiredScopes: z.array(scopeToken).default([]),
        /** OAuth Protected Resource Metadata (RFC 9728). Published whenever set, and always in mode "jwt". */
        resourceMetadata: ResourceMetadataSchema.optional(),
      })
      .strict()
      .superRefine((auth, ctx) => {
        if (auth.mode === "tokens" && auth.tokens.length === 0) {
          ctx.addIssue({ code: "custom", path: ["tokens"], message: "mode 'tokens' needs at least one token" });
        }
        if (auth.mode === "jwt" && auth.jwt === undefined) {
          ctx.addIssue({
            code: "custom",
            path: ["jwt"],
            message: "mode 'jwt' needs auth.jwt: issuer, audience, and jwksUrl or publicKey",
          });
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
      }),
    legacy: z
      .object({
        /** false: legacy (2025-11-25) requests are refused with an error that says to use 2026-07-28. */
        enabled: z.boolean().default(true),
        /** required: legacy requests authenticate like modern ones (auth.mode tokens/jwt); open: they pass unauthenticated. Demo mode is always open. */
        auth: z.enum(["required", "open"]).default("required"),
        /** Scopes a legacy request's token must carry; unset = auth.requiredScopes (the same as the modern door). */
        requiredScopes: z.array(scopeToken).optional(),
      })
      .strict()
      .prefault({}),
    quotas: z
      .object({
        /** Tasks one identity may have running (working or input_required) on this instance; none when unset. */
        maxRunningTasks: z.number().int().positive().optional(),
        /** Inline calls (answering, or held between MRTR rounds) one identity may have open on this instance; none when unset. */
        maxHeldCalls: z.number().int().positive().optional(),
        /** Requests per minute one identity may send to this instance (token bucket, bursts up to this many); none when unset. */
        requestsPerMinute: z.number().int().positive().optional(),
      })
      .strict()
      .prefault({}),
    store: z
      .object({
        /** memory (one process), file (one process, survives restarts), redis (several instances). */
        kind: z.enum(["memory", "file", "redis"]).default("memory"),
        /** File of the file store. */
        path: z.string().default(".taskgate/tasks.json"),
        /** Redis of the redis store (tasks, cross-instance events, instance leases). */
        url: z.url({ protocol: /^rediss?$/, error: "must be a redis:// or rediss:// URL" }).default("redis://127.0.0.1:6379"),
        /** Key and channel prefix in Redis: instances sharing tasks share the prefix. */
        prefix: z
          .string()
          .regex(/^[A-Za-z0-9_.:-]+$/, "letters, digits and _ . : - only")
          .default("taskgate"),
        /** An instance that stopped renewing its lease this long ago is gone; its tasks fail. */
        leaseMs: timerMs.min(1000).default(15_000),
        /** A store command (Redis) or write (file) not done within this long fails, naming the store. */
        commandTimeoutMs: timerMs.min(1).default(5_000),
      })
      .strict()
      .prefault({}),
    tasks: z
      .object({
        policy: TaskPolicy.default("auto"),
        autoAfterMs: timerMs.min(0).default(1000),
        ttlMs: positiveMs.default(3_600_000),
        pollIntervalMs: positiveMs.default(5000),
        tools: z.record(z.string(), TaskPolicy).default({}),
        /** Per tool, the inputRequests key its questions get (wins over the schema-derived key). */
        inputKeys: z.record(z.string(), z.string().regex(/^[A-Za-z0-9_.-]+$/)).default({}),
      })
      .strict()
      .prefault({}),
    mrtr: z
      .object({
        /** Key material sealing requestState (AES-256-GCM, key derived with HKDF-SHA256; ≥32 characters, e.g. 32 random bytes as hex or base64). A random key per process when unset: set the same value on every instance. */
        secret: z.string().min(32, "must be at least 32 characters (use 32+ random bytes, hex or base64)").optional(),
        /** A held inline call nobody resumes is cancelled upstream after this long. */
        holdTimeoutMs: timerMs.positive().default(300_000),
      })
      .strict()
      .prefault({}),
    cache: z
      .object({
        /** ttlMs / cacheScope put on cacheable results (discover, lists, reads). */
        ttlMs: z.number().int().min(0).default(60_000),
        cacheScope: z.enum(["public", "private"]).default("private"),
      })
      .strict()
      .prefault({}),
    http: z
      .object({
        /** A client must send its request headers within this long (slow clients are cut off). */
        headersTimeoutMs: timerMs.positive().default(10_000),
        /** ... and its whole request, headers and body, within this long. */
        requestTimeoutMs: timerMs.positive().default(30_000),
        /** An idle keep-alive connection is closed after this long. */
        keepAliveTimeoutMs: timerMs.positive().default(5_000),
      })
      .strict()
      .refine((http) => http.headersTimeoutMs <= http.requestTimeoutMs, {
        path: ["headersTimeoutMs"],
        message: "must not exceed http.requestTimeoutMs (the whole request includes its headers)",
      })
      .prefault({}),
    shutdown: z
      .object({
        /** On SIGTERM, inline calls in flight get this long to finish before they end with an error. */
        graceMs: timerMs.min(0).default(10_000),
      })
      .strict()
      .prefault({}),
    subscriptions: z
      .object({
        /** Interval of the `:` keep-alive comments on SSE responses (listen streams, streamed calls). */
        keepAliveMs: timerMs.positive().default(15_000),
      })
      .strict()
      .prefault({}),
    log: z
      .object({
        level: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
        /** json: one JSON object per line. pretty: readable lines (pino-pretty). auto: pretty when stdout is a terminal. */
        format: z.enum(["auto", "json", "pretty"]).default("auto"),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;
