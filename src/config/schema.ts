// The configuration schema: every option of taskgate declared once (declaration.ts), as one zod
// object that is the single source of truth for the option, its default, what is allowed, its
// environment variable, its flag and its help. Loading (file, env, flags) lives in loadConfig.ts;
// the environment table, the flag list, `serve --help` and docs/configuration.md come from
// walking this object (catalog.ts).

import { z } from "zod";
import { AccessSchema, ApprovalsOption, AuditSchema } from "./accessOptions.js";
import { AuthSchema } from "./authOptions.js";
import { ConsoleSchema } from "./consoleOptions.js";
import { option, section } from "./declaration.js";
import { BackendsOption, checkFleet, FederationSchema, ReloadSchema } from "./fleetOptions.js";
import { InventorySchema, NotifySchema } from "./inventoryOptions.js";
import { checkOwnPaths } from "./ownPaths.js";
import { UpstreamSchema } from "./upstreamOptions.js";
import { positiveMs, scopeToken, TaskPolicy, timerMs } from "./values.js";

export { JWT_ALGORITHMS, type JwtAlgorithm, JwtSchema, ResourceMetadataSchema } from "./authOptions.js";
export { UpstreamSchema } from "./upstreamOptions.js";

export { TaskPolicy } from "./values.js";

const LegacySchema = z
  .object({
    enabled: option(z.boolean().default(true), {
      help: "whether the legacy door is open",
      details: "`false`: legacy (2025-11-25) requests get HTTP 400 -32022 telling the client to use 2026-07-28.",
    }),
    auth: option(z.enum(["required", "open"]).default("required"), {
      help: "whether legacy requests authenticate",
      details:
        "`required`: like modern ones (modes `tokens`, `jwt`), and each legacy session is bound to its identity; " +
        "`open`: they pass unauthenticated. Demo mode is always open.",
    }),
    requiredScopes: option(z.array(scopeToken).optional(), {
      help: "scopes a legacy request's token must carry (HTTP 403 insufficient_scope otherwise)",
      defaultText: "auth.requiredScopes",
    }),
  })
  .strict();

const QuotasSchema = z
  .object({
    maxRunningTasks: option(z.number().int().positive().optional(), {
      help: "tasks one identity may have running (working or input_required) on this instance; over it HTTP 429",
      defaultText: "no limit",
    }),
    maxHeldCalls: option(z.number().int().positive().optional(), {
      help: "inline calls (answering, or held between MRTR rounds) one identity may have open on this instance; over it HTTP 429",
      defaultText: "no limit",
    }),
    requestsPerMinute: option(z.number().int().positive().optional(), {
      help: "requests per minute one identity may send to this instance (token bucket, bursts up to this many); over it HTTP 429",
      details: "Counts the MCP endpoint, the task inventory and `/approvals` in one bucket. The 429 carries `Retry-After`.",
      defaultText: "no limit",
    }),
  })
  .strict();

const StoreSchema = z
  .object({
    kind: option(z.enum(["memory", "file", "redis", "postgres", "keyv"]).default("memory"), {
      help: "task store",
      details:
        "`memory`: one process, lost on exit; `file`: one process, survives restarts; " +
        "`redis` or `postgres`: several instances sharing tasks; " +
        "`keyv`: one process, over any keyv adapter (store.uri). See docs/stores.md.",
      flag: "--store <kind>",
    }),
    path: option(z.string().default(".taskgate/tasks.json"), {
      help: "file of the file store",
      details: "Relative to the working directory; parent folders are created.",
      flag: "--store-path <file>",
    }),
    url: option(
      z
        .url({ protocol: /^(rediss?|postgres(ql)?)$/, error: "must be a redis://, rediss://, postgres:// or postgresql:// URL" })
        .default("redis://127.0.0.1:6379"),
      {
        help: "Redis (redis://, rediss://) of the redis store, or PostgreSQL (postgres://, postgresql://) of the postgres store",
        details: "It holds the tasks, the events instances send each other and their leases.",
        flag: "--store-url <url>",
      },
    ),
    uri: option(z.string().min(1).optional(), {
      help: "keyv store: the keyv adapter's connection uri (sqlite://…, postgres://…, mysql://…, redis://…, mongodb://…)",
      details: "The adapter package for the scheme (e.g. @keyv/sqlite) must be installed beside taskgate.",
    }),
    prefix: option(
      z
        .string()
        .regex(/^[A-Za-z0-9_.:-]+$/, "letters, digits and _ . : - only")
        .default("taskgate"),
      { help: "key and channel prefix in Redis: instances sharing tasks share the prefix" },
    ),
    leaseMs: option(timerMs.min(1000).default(15_000), {
      help: "an instance that stopped renewing its lease this long ago is gone; its running tasks fail",
    }),
    commandTimeoutMs: option(timerMs.min(1).default(5_000), {
      help: "a store command or file write not done within this long fails with store_unavailable, naming the store",
      details: "Covers Redis and PostgreSQL commands, keyv adapter calls and the file store's writes.",
    }),
    redisReviveAfterMs: option(timerMs.min(1000).default(8_000), {
      help: "redis store: a Redis connection not ready, or not answering a PING, for this long is closed and opened afresh",
      details:
        "Each connection (tasks, leases, bus, holder link, session ledger) is looked at every quarter of it. " +
        "A guard for a connection the Redis client's own reconnect left for dead; logged as redis.error.",
    }),
  })
  .strict()
  .superRefine((store, ctx) => {
    const postgres = /^postgres(ql)?:/.test(store.url);
    if (store.kind === "redis" && postgres)
      ctx.addIssue({ code: "custom", path: ["url"], message: "store.kind redis needs a redis:// or rediss:// URL" });
    if (store.kind === "postgres" && !postgres) {
      ctx.addIssue({ code: "custom", path: ["url"], message: "store.kind postgres needs a postgres:// or postgresql:// URL in store.url" });
    }
    if (store.kind === "keyv" && store.uri === undefined) {
      ctx.addIssue({ code: "custom", path: ["uri"], message: "store.kind keyv needs store.uri, the keyv adapter's connection uri" });
    }
  });

const TasksSchema = z
  .object({
    policy: option(TaskPolicy.default("auto"), { help: "policy of tools not listed in tasks.tools" }),
    autoAfterMs: option(timerMs.min(0).default(1000), { help: "with policy auto, a call still running after this long becomes a task" }),
    ttlMs: option(positiveMs.default(3_600_000), {
      help: "how long a task and its result are kept, from creation; a running task's upstream call is stopped then",
    }),
    pollIntervalMs: option(positiveMs.default(5000), { help: "the pollIntervalMs suggested to clients in every task" }),
    tools: option(z.record(z.string(), TaskPolicy).default({}), {
      help: "per-tool policy, e.g. {build_report: always}; wins over the upstream's hint and tasks.policy",
      env: false,
    }),
    inputKeys: option(z.record(z.string(), z.string().regex(/^[A-Za-z0-9_.-]+$/)).default({}), {
      help: "per tool, the inputRequests key its questions get ([A-Za-z0-9_.-]+), e.g. {run_suite: confirm}",
      details: "Wins over the key derived from the question's schema.",
      env: false,
    }),
  })
  .strict();

const MrtrSchema = z
  .object({
    secret: option(z.string().min(32, "must be at least 32 characters (use 32+ random bytes, hex or base64)").optional(), {
      help: "key material sealing requestState (AES-256-GCM, key derived with HKDF-SHA256; at least 32 characters)",
      details:
        "Set the same value on every instance (and to keep questions in flight across restarts), e.g. " +
        "`openssl rand -hex 32`; unset, each process has its own random key.",
      defaultText: "random per start",
    }),
    holdTimeoutMs: option(timerMs.positive().default(300_000), {
      help: "a held inline call nobody resumes is cancelled upstream after this long",
    }),
  })
  .strict();

const CacheSchema = z
  .object({
    ttlMs: option(z.number().int().min(0).default(60_000), { help: "the ttlMs put on cacheable results (discover, lists, reads)" }),
    cacheScope: option(z.enum(["public", "private"]).default("private"), { help: "the cacheScope put on those results", env: "SCOPE" }),
  })
  .strict();

const HttpSchema = z
  .object({
    headersTimeoutMs: option(timerMs.positive().default(10_000), {
      help: "a client must send its request headers within this long, else its connection is closed",
    }),
    requestTimeoutMs: option(timerMs.positive().default(30_000), { help: "... and its whole request, headers and body, within this long" }),
    keepAliveTimeoutMs: option(timerMs.positive().default(5_000), { help: "an idle keep-alive connection is closed after this long" }),
  })
  .strict()
  .refine((http) => http.headersTimeoutMs <= http.requestTimeoutMs, {
    path: ["headersTimeoutMs"],
    message: "must not exceed http.requestTimeoutMs (the whole request includes its headers)",
  });

const ShutdownSchema = z
  .object({
    graceMs: option(timerMs.min(0).default(10_000), {
      help: "on SIGTERM or SIGINT, inline calls in flight get this long to finish, then end with a shutting_down error",
    }),
  })
  .strict();

const SubscriptionsSchema = z
  .object({
    keepAliveMs: option(timerMs.positive().default(15_000), {
      help: "interval of the `:` keep-alive comments on SSE responses (listen streams, streamed calls)",
    }),
  })
  .strict();

const LogSchema = z
  .object({
    level: option(z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"), {
      help: "log level",
      flag: "--log-level <level>",
    }),
    format: option(z.enum(["auto", "json", "pretty"]).default("auto"), {
      help: "how log lines are written",
      details:
        "`json`: one JSON object per line; `pretty`: readable lines (pino-pretty); `auto`: pretty when stdout is a terminal, else json.",
      flag: "--log-format <format>",
    }),
  })
  .strict();

const TracingSchema = z
  .object({
    enabled: option(z.boolean().default(false), {
      help: "send OpenTelemetry traces (OTLP over HTTP); off, tracing costs nothing and its SDK is not loaded",
      details:
        "Where and how is read from the standard `OTEL_*` variables: `OTEL_EXPORTER_OTLP_ENDPOINT` (default " +
        "`http://localhost:4318`), `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf` or `http/json`), `OTEL_TRACES_SAMPLER` " +
        "and `OTEL_TRACES_SAMPLER_ARG`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SDK_DISABLED`. See docs/tracing.md.",
    }),
    serviceName: option(z.string().min(1).default("taskgate"), {
      help: "the service.name of taskgate's spans; OTEL_SERVICE_NAME wins when set",
    }),
  })
  .strict();

export const ConfigSchema = z
  .object({
    upstream: UpstreamSchema.optional(),
    host: option(z.string().min(1).default("127.0.0.1"), {
      help: "address to listen on (0.0.0.0 = every interface)",
      flag: "--host <host>",
    }),
    port: option(z.number().int().min(0).max(65535).default(3000), {
      help: "port to listen on (0 = any free port)",
      details: "`PORT` (the hosting platforms' convention) is used when `TASKGATE_PORT` is not set.",
      flag: "--port <port>",
    }),
    path: option(z.string().startsWith("/").default("/mcp"), {
      help: "path of the MCP endpoint on taskgate (must start with /); not one of taskgate's own (/readyz, /metrics, /tasks, …)",
      details:
        "Refused at or under /livez, /readyz, /healthz, /metrics, /console, /tasks, /me, /admin, /notify, /approvals and /.well-known.",
    }),
    bodyLimitBytes: option(z.number().int().positive().default(1_048_576), {
      help: "largest accepted request body, in bytes; larger is HTTP 413",
    }),
    allowedOrigins: option(z.array(z.string()).default([]), {
      help: "Origin values accepted besides loopback ones (exact match; DNS-rebinding protection); others are HTTP 403",
    }),
    allowedHosts: option(z.array(z.string()).default([]), {
      help: "Host values accepted besides loopback ones (name or name:port, case-insensitive); others are HTTP 403",
    }),
    auth: AuthSchema,
    legacy: section(LegacySchema.prefault({}), { help: "The legacy door: old (2025-11-25) clients, passed through to the upstream." }),
    quotas: section(QuotasSchema.prefault({}), { help: "Per identity, counted per instance; unset = no limit. Over a limit: HTTP 429." }),
    store: section(StoreSchema.prefault({}), { help: "Where tasks are kept, and how instances sharing them find each other." }),
    tasks: section(TasksSchema.prefault({}), { help: "When a tool call becomes a task, and how long tasks live." }),
    mrtr: section(MrtrSchema.prefault({}), { help: "Inline calls whose upstream asks a question (input_required rounds)." }),
    cache: section(CacheSchema.prefault({}), { help: "Cache hints put on cacheable results." }),
    http: section(HttpSchema.prefault({}), { help: "Limits on clients' HTTP connections." }),
    shutdown: section(ShutdownSchema.prefault({}), { help: "Stopping on SIGTERM or SIGINT." }),
    subscriptions: section(SubscriptionsSchema.prefault({}), { help: "Server-sent event streams." }),
    log: section(LogSchema.prefault({}), { help: "The pino log." }),
    access: AccessSchema,
    approvals: ApprovalsOption,
    audit: AuditSchema,
    backends: BackendsOption,
    federation: FederationSchema,
    reload: ReloadSchema,
    tracing: section(TracingSchema.prefault({}), { help: "OpenTelemetry traces of requests, upstream calls, store operations and tasks." }),
    inventory: section(InventorySchema.prefault({}), { help: "The task inventory: owners' and operators' HTTP view of tasks." }),
    notify: section(NotifySchema.prefault({}), { help: "Telling a task's owner when it needs input, completes or fails." }),
    console: section(ConsoleSchema.prefault({}), { help: "The web console at /console: people's tasks and questions, in a browser." }),
  })
  .strict()
  .superRefine((config, ctx) => {
    checkOwnPaths(config, ctx);
    checkFleet(config, ctx);
  });

export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;
/** One upstream's options: `upstream`, or each backend of a fleet. */
export type UpstreamOptions = z.infer<typeof UpstreamSchema>;
