// loadConfig: builds the one validated Config from layers, later ones winning:
// schema defaults < config file (.yaml/.yml/.json) < TASKGATE_* environment variables < CLI overrides.
// `PORT` (the Node convention of hosting platforms) sets the port when TASKGATE_PORT does not;
// Kubernetes service-link variables (TASKGATE_SERVICE_HOST, TASKGATE_PORT=tcp://…) are ignored.
// Objects are deep-merged; arrays and scalars replace. Every failure throws ConfigError, whose message
// has one line per problem naming the option path, where the value came from, and what is allowed.
// loadConfigWithReport also says where each value came from and which values a later layer replaced.

import { readFileSync } from "node:fs";
import { extname } from "node:path";
import { type Document, isMap, isSeq, LineCounter, parseDocument } from "yaml";
import { z } from "zod";
import { splitCommandLine } from "./commandLine.js";
import { type Config, type ConfigInput, ConfigSchema } from "./schema.js";
import { serviceLinkShape } from "./serviceLinks.js";

/** Thrown for every configuration problem; `message` is `problems` joined by newlines. */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: string | readonly string[]) {
    const list = typeof problems === "string" ? [problems] : [...problems];
    super(list.join("\n"));
    this.name = "ConfigError";
    this.problems = list;
  }
}

type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> | undefined } : T;

/** What CLI flags may set: any part of the config input. `undefined` values are ignored. */
export type ConfigOverrides = DeepPartial<ConfigInput>;

export interface ConfigSources {
  /** Path of a .yaml/.yml/.json config file. */
  file?: string;
  /** Environment to read TASKGATE_* variables from (pass process.env). Omitted = no environment layer. */
  env?: NodeJS.ProcessEnv;
  /** Values from CLI flags. */
  overrides?: ConfigOverrides;
  /** Optional flag names per dotted option path, e.g. { port: "--port", "upstream.url": "--upstream" }, for messages. */
  flagNames?: Readonly<Record<string, string>>;
}

type EnvKind = "string" | "int" | "bool" | "list" | "tokens" | "command";
type Segment = string | number;

const ENV_TABLE = {
  TASKGATE_UPSTREAM_URL: { path: ["upstream", "url"], kind: "string" },
  TASKGATE_UPSTREAM_COMMAND: { path: ["upstream", "command"], kind: "command" },
  TASKGATE_UPSTREAM_CWD: { path: ["upstream", "cwd"], kind: "string" },
  TASKGATE_UPSTREAM_MAX_SESSIONS: { path: ["upstream", "maxSessions"], kind: "int" },
  TASKGATE_UPSTREAM_MAX_PROCESSES: { path: ["upstream", "maxProcesses"], kind: "int" },
  TASKGATE_UPSTREAM_STOP_GRACE_MS: { path: ["upstream", "stopGraceMs"], kind: "int" },
  TASKGATE_UPSTREAM_SESSION_IDLE_MS: { path: ["upstream", "sessionIdleMs"], kind: "int" },
  TASKGATE_UPSTREAM_CONNECT_TIMEOUT_MS: { path: ["upstream", "connectTimeoutMs"], kind: "int" },
  TASKGATE_UPSTREAM_INITIALIZE_TIMEOUT_MS: { path: ["upstream", "initializeTimeoutMs"], kind: "int" },
  TASKGATE_UPSTREAM_REQUEST_TIMEOUT_MS: { path: ["upstream", "requestTimeoutMs"], kind: "int" },
  TASKGATE_UPSTREAM_PING_INTERVAL_MS: { path: ["upstream", "pingIntervalMs"], kind: "int" },
  TASKGATE_UPSTREAM_PING_TIMEOUT_MS: { path: ["upstream", "pingTimeoutMs"], kind: "int" },
  TASKGATE_UPSTREAM_FORWARD_AUTHORIZATION: { path: ["upstream", "forwardAuthorization"], kind: "bool" },
  TASKGATE_UPSTREAM_SUBJECT_HEADER: { path: ["upstream", "subjectHeader"], kind: "string" },
  TASKGATE_LEGACY_ENABLED: { path: ["legacy", "enabled"], kind: "bool" },
  TASKGATE_LEGACY_AUTH: { path: ["legacy", "auth"], kind: "string" },
  TASKGATE_QUOTAS_MAX_RUNNING_TASKS: { path: ["quotas", "maxRunningTasks"], kind: "int" },
  TASKGATE_QUOTAS_MAX_HELD_CALLS: { path: ["quotas", "maxHeldCalls"], kind: "int" },
  TASKGATE_QUOTAS_REQUESTS_PER_MINUTE: { path: ["quotas", "requestsPerMinute"], kind: "int" },
  TASKGATE_HOST: { path: ["host"], kind: "string" },
  TASKGATE_PORT: { path: ["port"], kind: "int" },
  TASKGATE_PATH: { path: ["path"], kind: "string" },
  TASKGATE_BODY_LIMIT_BYTES: { path: ["bodyLimitBytes"], kind: "int" },
  TASKGATE_ALLOWED_ORIGINS: { path: ["allowedOrigins"], kind: "list" },
  TASKGATE_ALLOWED_HOSTS: { path: ["allowedHosts"], kind: "list" },
  TASKGATE_AUTH_MODE: { path: ["auth", "mode"], kind: "string" },
  TASKGATE_AUTH_TOKENS: { path: ["auth", "tokens"], kind: "tokens" },
  TASKGATE_AUTH_REQUIRED_SCOPES: { path: ["auth", "requiredScopes"], kind: "list" },
  TASKGATE_LEGACY_REQUIRED_SCOPES: { path: ["legacy", "requiredScopes"], kind: "list" },
  TASKGATE_AUTH_JWT_JWKS_URL: { path: ["auth", "jwt", "jwksUrl"], kind: "string" },
  TASKGATE_AUTH_JWT_PUBLIC_KEY: { path: ["auth", "jwt", "publicKey"], kind: "string" },
  TASKGATE_AUTH_JWT_ISSUER: { path: ["auth", "jwt", "issuer"], kind: "string" },
  TASKGATE_AUTH_JWT_AUDIENCE: { path: ["auth", "jwt", "audience"], kind: "list" },
  TASKGATE_AUTH_JWT_ALGORITHMS: { path: ["auth", "jwt", "algorithms"], kind: "list" },
  TASKGATE_AUTH_JWT_CLOCK_TOLERANCE_SEC: { path: ["auth", "jwt", "clockToleranceSec"], kind: "int" },
  TASKGATE_AUTH_JWT_SUBJECT_CLAIM: { path: ["auth", "jwt", "subjectClaim"], kind: "string" },
  TASKGATE_AUTH_JWT_JWKS_TIMEOUT_MS: { path: ["auth", "jwt", "jwksTimeoutMs"], kind: "int" },
  TASKGATE_AUTH_JWT_JWKS_COOLDOWN_MS: { path: ["auth", "jwt", "jwksCooldownMs"], kind: "int" },
  TASKGATE_AUTH_RESOURCE: { path: ["auth", "resourceMetadata", "resource"], kind: "string" },
  TASKGATE_AUTH_AUTHORIZATION_SERVERS: { path: ["auth", "resourceMetadata", "authorizationServers"], kind: "list" },
  TASKGATE_AUTH_SCOPES_SUPPORTED: { path: ["auth", "resourceMetadata", "scopesSupported"], kind: "list" },
  TASKGATE_AUTH_RESOURCE_NAME: { path: ["auth", "resourceMetadata", "resourceName"], kind: "string" },
  TASKGATE_STORE_KIND: { path: ["store", "kind"], kind: "string" },
  TASKGATE_STORE_PATH: { path: ["store", "path"], kind: "string" },
  TASKGATE_STORE_URL: { path: ["store", "url"], kind: "string" },
  TASKGATE_STORE_PREFIX: { path: ["store", "prefix"], kind: "string" },
  TASKGATE_STORE_LEASE_MS: { path: ["store", "leaseMs"], kind: "int" },
  TASKGATE_STORE_COMMAND_TIMEOUT_MS: { path: ["store", "commandTimeoutMs"], kind: "int" },
  TASKGATE_TASKS_POLICY: { path: ["tasks", "policy"], kind: "string" },
  TASKGATE_TASKS_AUTO_AFTER_MS: { path: ["tasks", "autoAfterMs"], kind: "int" },
  TASKGATE_TASKS_TTL_MS: { path: ["tasks", "ttlMs"], kind: "int" },
  TASKGATE_TASKS_POLL_INTERVAL_MS: { path: ["tasks", "pollIntervalMs"], kind: "int" },
  TASKGATE_CACHE_TTL_MS: { path: ["cache", "ttlMs"], kind: "int" },
  TASKGATE_CACHE_SCOPE: { path: ["cache", "cacheScope"], kind: "string" },
  TASKGATE_SUBSCRIPTIONS_KEEP_ALIVE_MS: { path: ["subscriptions", "keepAliveMs"], kind: "int" },
  TASKGATE_HTTP_HEADERS_TIMEOUT_MS: { path: ["http", "headersTimeoutMs"], kind: "int" },
  TASKGATE_HTTP_REQUEST_TIMEOUT_MS: { path: ["http", "requestTimeoutMs"], kind: "int" },
  TASKGATE_HTTP_KEEP_ALIVE_TIMEOUT_MS: { path: ["http", "keepAliveTimeoutMs"], kind: "int" },
  TASKGATE_SHUTDOWN_GRACE_MS: { path: ["shutdown", "graceMs"], kind: "int" },
  TASKGATE_LOG_LEVEL: { path: ["log", "level"], kind: "string" },
  TASKGATE_LOG_FORMAT: { path: ["log", "format"], kind: "string" },
  TASKGATE_MRTR_SECRET: { path: ["mrtr", "secret"], kind: "string" },
  TASKGATE_MRTR_HOLD_TIMEOUT_MS: { path: ["mrtr", "holdTimeoutMs"], kind: "int" },
} as const satisfies Record<string, { path: readonly string[]; kind: EnvKind }>;

export type EnvVarName = keyof typeof ENV_TABLE;

/** Every TASKGATE_* variable loadConfig understands; any other TASKGATE_* variable is an error. */
export const ENV_VARS: readonly EnvVarName[] = Object.keys(ENV_TABLE) as EnvVarName[];

/** How a variable's text becomes a value: as is, an integer, true/false, a comma list, or `sha256hex:subject,…`. */
export type EnvValueKind = EnvKind;

/** Every TASKGATE_* variable with the option it sets (dotted path) and how its text is read. */
export const ENV_OPTIONS: ReadonlyArray<{ variable: EnvVarName; option: string; kind: EnvValueKind }> = ENV_VARS.map((variable) => ({
  variable,
  option: ENV_TABLE[variable].path.join("."),
  kind: ENV_TABLE[variable].kind,
}));

/** The platform convention: the port to listen on, used when TASKGATE_PORT is not set. */
export const PORT_VARIABLE = "PORT";

type Source = { kind: "file"; file: string } | { kind: "env"; variable: string } | { kind: "flag"; flag?: string | undefined };

/** What loadConfigWithReport tells besides the Config. Names only, never values (they may be secrets). */
export interface ConfigReport {
  /** The config file read, if any. */
  file?: string;
  /** Options set by each layer above the defaults, as "option (source)" for env and flags. */
  fromFile: string[];
  fromEnv: string[];
  fromFlags: string[];
  /** A value set in one layer and replaced by a later one, e.g. host from the file replaced by --host. */
  overridden: Array<{ option: string; by: string; over: string }>;
  /** TASKGATE_* variables ignored on purpose (Kubernetes service links), with the shape recognised. */
  ignored: Array<{ variable: string; reason: string }>;
}

type Raw = Record<string, unknown>;

interface FileLayer {
  data: Raw;
  doc: Document;
  lines: LineCounter;
}

export function loadConfig(sources: ConfigSources = {}): Config {
  return loadConfigWithReport(sources).config;
}

/** loadConfig, plus where each value came from (for the start-up log line). Throws ConfigError the same way. */
export function loadConfigWithReport(sources: ConfigSources = {}): { config: Config; report: ConfigReport } {
  const problems: string[] = [];
  const provenance = new Map<string, Source>();
  const overridden: ConfigReport["overridden"] = [];
  const ignored: ConfigReport["ignored"] = [];
  let merged: Raw = {};

  let fileLayer: FileLayer | undefined;
  if (sources.file !== undefined) {
    const result = readConfigFile(sources.file);
    if ("problem" in result) problems.push(result.problem);
    else fileLayer = result;
  }
  const envLayer = sources.env ? readEnv(sources.env, problems, ignored) : undefined;
  if (problems.length > 0) throw new ConfigError(problems);

  const merge = (layer: Raw, sourceOf: (path: Segment[]) => Source) => {
    merged = mergeLayer(merged, layer, [], { provenance, overridden }, sourceOf);
  };
  if (fileLayer && sources.file !== undefined) {
    const file = sources.file;
    merge(fileLayer.data, () => ({ kind: "file", file }));
  }
  if (envLayer) {
    merge(envLayer.data, (path) => ({ kind: "env", variable: envLayer.variableOf.get(pathKey(path)) ?? "environment" }));
  }
  if (sources.overrides) {
    const flagNames = sources.flagNames ?? {};
    merge(sources.overrides as Raw, (path) => ({ kind: "flag", flag: flagNames[pathKey(path)] }));
  }

  // Secrets stay out of files: `${NAME}` in an upstream header value is the environment variable NAME.
  expandHeaderVariables(merged, sources.env ?? process.env, problems, (path) => sourceSuffix(path, { merged, provenance, fileLayer }));
  if (problems.length > 0) throw new ConfigError(problems);

  // Required blocks without a default: an absent block is reported as its missing options
  // ("upstream.url: is required") rather than as "upstream: expected object".
  for (const block of ["upstream", "auth"]) if (merged[block] === undefined) merged[block] = {};

  const parsed = ConfigSchema.safeParse(merged, { reportInput: true });
  if (parsed.success) return { config: parsed.data, report: reportOf(sources.file, provenance, overridden, ignored) };

  const context: IssueContext = { merged, provenance, fileLayer };
  throw new ConfigError(parsed.error.issues.flatMap((issue) => describeIssue(issue, context)));
}

// ---------------------------------------------------------------------------------------------
// File layer

function readConfigFile(file: string): FileLayer | { problem: string } {
  const ext = extname(file).toLowerCase();
  if (ext !== ".yaml" && ext !== ".yml" && ext !== ".json") {
    return { problem: `config file ${file}: unsupported extension "${ext}" (use .yaml, .yml or .json)` };
  }
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { problem: `config file not found: ${file}` };
    if (code === "EISDIR") return { problem: `config file ${file}: is a directory, not a file` };
    return { problem: `config file ${file}: cannot be read (${code ?? String(error)})` };
  }

  const lines = new LineCounter();
  let data: unknown;
  let doc: Document;
  if (ext === ".json") {
    try {
      data = JSON.parse(text);
    } catch (error) {
      return { problem: `config file ${file}: JSON syntax error ${jsonErrorWhere(text, error)}` };
    }
    // Valid JSON is valid YAML: parse it again only to know the line of each option for messages.
    doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  } else {
    doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
    const [first] = doc.errors;
    if (first) {
      const { line, col } = lines.linePos(first.pos[0]);
      const message = first.message.split("\n")[0] ?? "invalid YAML";
      const more = doc.errors.length > 1 ? ` (and ${doc.errors.length - 1} more YAML error(s))` : "";
      return { problem: `config file ${file}: YAML syntax error at line ${line}, column ${col}: ${message}${more}` };
    }
    try {
      data = doc.toJS();
    } catch (error) {
      return { problem: `config file ${file}: YAML cannot be read: ${(error as Error).message}` };
    }
  }

  if (data === null || data === undefined) data = {}; // empty file: nothing set
  if (!isPlainObject(data)) {
    return { problem: `config file ${file}: the top level must be a mapping of options (got ${typeName(data)})` };
  }
  return { data, doc, lines };
}

function jsonErrorWhere(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const clean = message.replace(/\s*in JSON at position \d+.*$/s, "").replace(/\s*\(line \d+ column \d+\)/, "");
  const lineCol = /line (\d+) column (\d+)/.exec(message);
  if (lineCol) return `at line ${lineCol[1]}, column ${lineCol[2]}: ${clean}`;
  const position = /position (\d+)/.exec(message);
  if (position) {
    const before = text.slice(0, Number(position[1]));
    const line = before.split("\n").length;
    const col = before.length - before.lastIndexOf("\n");
    return `at line ${line}, column ${col}: ${clean}`;
  }
  return `: ${clean}`;
}

// ---------------------------------------------------------------------------------------------
// Environment layer

function readEnv(
  env: NodeJS.ProcessEnv,
  problems: string[],
  ignored: ConfigReport["ignored"],
): { data: Raw; variableOf: Map<string, string> } {
  const data: Raw = {};
  const variableOf = new Map<string, string>();

  for (const [name, rawValue] of Object.entries(env)) {
    if (!name.startsWith("TASKGATE_") || rawValue === undefined) continue;
    const link = serviceLinkShape(name, rawValue);
    if (link) {
      ignored.push({ variable: name, reason: `Kubernetes service link (${link})` });
      continue;
    }
    if (!(name in ENV_TABLE)) {
      const guess = closest(name, ENV_VARS);
      problems.push(`${name}: unknown environment variable${guess ? ` (did you mean ${guess}?)` : ""}; known: ${ENV_VARS.join(", ")}`);
      continue;
    }
    const { path, kind } = ENV_TABLE[name as EnvVarName];
    const text = rawValue.trim();
    let value: unknown;
    switch (kind) {
      case "string":
        if (text === "") continue; // empty = not set
        value = text;
        break;
      case "int":
        if (text === "") continue;
        if (!/^[+-]?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
          problems.push(`${name}: must be an integer (option ${formatPath(path)}), got ${quote(text)}`);
          continue;
        }
        value = Number(text);
        break;
      case "bool":
        if (text === "") continue;
        if (!/^(true|false)$/i.test(text)) {
          problems.push(`${name}: must be true or false (option ${formatPath(path)}), got ${quote(text)}`);
          continue;
        }
        value = text.toLowerCase() === "true";
        break;
      case "list":
        value = splitList(text);
        break;
      case "command":
        if (text.trim() === "") continue;
        try {
          value = splitCommandLine(text);
        } catch (error) {
          problems.push(`${name}: cannot be read as a command line (option ${formatPath(path)}): ${(error as Error).message}`);
          continue;
        }
        break;
      case "tokens": {
        const tokens: { sha256: string; subject: string }[] = [];
        let ok = true;
        splitList(text).forEach((entry, index) => {
          const colon = entry.indexOf(":");
          const sha256 = entry.slice(0, colon).trim();
          const subject = entry.slice(colon + 1).trim();
          if (colon < 0 || sha256 === "" || subject === "") {
            // The entry itself is not echoed: it might be a raw secret pasted by mistake.
            problems.push(`${name}: entry ${index + 1} must be "sha256hex:subject" (option auth.tokens)`);
            ok = false;
          } else tokens.push({ sha256, subject });
        });
        if (!ok) continue;
        value = tokens;
        break;
      }
    }
    setPath(data, path, value);
    variableOf.set(pathKey(path), name);
  }

  // PORT only where TASKGATE_PORT set nothing (absent, empty, or a service link).
  const port = env[PORT_VARIABLE]?.trim();
  if (port && data.port === undefined) {
    if (/^\d+$/.test(port) && Number.isSafeInteger(Number(port))) {
      data.port = Number(port);
      variableOf.set("port", PORT_VARIABLE);
    } else {
      problems.push(`${PORT_VARIABLE}: must be an integer (option port, used when TASKGATE_PORT is not set), got ${quote(port)}`);
    }
  }
  return { data, variableOf };
}

const splitList = (text: string) =>
  text
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");

function closest(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = editDistance(name, candidate);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return bestDistance <= Math.max(1, Math.floor(name.length / 4)) ? best : undefined;
}

/** Edit distance counting an adjacent transposition ("prot" for "port") as one edit. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    const up = rows[i - 1] ?? [];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((up[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (up[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, (rows[i - 2]?.[j - 2] ?? 0) + 1);
      }
      row[j] = best;
    }
    rows.push(row);
  }
  return rows[a.length]?.[b.length] ?? Infinity;
}

// ---------------------------------------------------------------------------------------------
// Merging with provenance

interface MergeRecord {
  provenance: Map<string, Source>;
  overridden: ConfigReport["overridden"];
}

/**
 * Deep-merges `layer` onto `base` (plain objects merge, everything else replaces), records the
 * source of every set path and every value a layer replaces with a different one.
 */
function mergeLayer(base: Raw, layer: Raw, at: Segment[], record: MergeRecord, sourceOf: (path: Segment[]) => Source): Raw {
  const out: Raw = { ...base };
  for (const [key, value] of Object.entries(layer)) {
    if (value === undefined) continue;
    const path = [...at, key];
    const existing = out[key];
    const before = record.provenance.get(pathKey(path));
    const source = sourceOf(path);
    if (before && !isPlainObject(value) && existing !== undefined && JSON.stringify(existing) !== JSON.stringify(value)) {
      record.overridden.push({ option: pathKey(path), by: describeSource(source), over: describeSource(before) });
    }
    record.provenance.set(pathKey(path), source);
    out[key] =
      isPlainObject(value) && isPlainObject(existing)
        ? mergeLayer(existing, value, path, record, sourceOf)
        : isPlainObject(value)
          ? mergeLayer({}, value, path, record, sourceOf)
          : value;
  }
  return out;
}

function describeSource(source: Source): string {
  switch (source.kind) {
    case "file":
      return `config file ${source.file}`;
    case "env":
      return source.variable;
    case "flag":
      return source.flag ? `flag ${source.flag}` : "a command-line flag";
  }
}

/** The report: leaf options per layer (objects are containers, not options). */
function reportOf(
  file: string | undefined,
  provenance: Map<string, Source>,
  overridden: ConfigReport["overridden"],
  ignored: ConfigReport["ignored"],
): ConfigReport {
  const keys = [...provenance.keys()];
  const leaves = keys.filter((key) => !keys.some((other) => other.startsWith(`${key}.`) || other.startsWith(`${key}[`)));
  const report: ConfigReport = { fromFile: [], fromEnv: [], fromFlags: [], overridden, ignored };
  if (file !== undefined) report.file = file;
  for (const key of leaves) {
    const source = provenance.get(key) as Source;
    if (source.kind === "file") report.fromFile.push(key);
    else if (source.kind === "env") report.fromEnv.push(`${key} (${source.variable})`);
    else report.fromFlags.push(source.flag ? `${key} (${source.flag})` : key);
  }
  return report;
}

function setPath(target: Raw, path: readonly string[], value: unknown) {
  let node = target;
  path.slice(0, -1).forEach((key) => {
    const next = node[key];
    node = isPlainObject(next) ? next : (node[key] = {});
  });
  node[path[path.length - 1] as string] = value;
}

// ---------------------------------------------------------------------------------------------
// `${NAME}` in upstream.headers

const VARIABLE_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Replaces each `${NAME}` in upstream.headers values with the variable's value; an unset (or empty) one is a problem naming it. */
function expandHeaderVariables(merged: Raw, env: NodeJS.ProcessEnv, problems: string[], sourceOf: (path: Segment[]) => string): void {
  const upstream = merged.upstream;
  if (!isPlainObject(upstream) || !isPlainObject(upstream.headers)) return;
  const headers: Raw = {};
  for (const [name, value] of Object.entries(upstream.headers)) {
    if (typeof value !== "string") {
      headers[name] = value;
      continue;
    }
    headers[name] = value.replace(VARIABLE_REFERENCE, (reference, variable: string) => {
      const found = env[variable];
      if (found === undefined || found === "") {
        problems.push(
          `${formatPath(["upstream", "headers", name])}: environment variable ${variable} is not set (the value refers to ${reference})${sourceOf(["upstream", "headers", name])}`,
        );
        return reference;
      }
      return found;
    });
  }
  merged.upstream = { ...upstream, headers };
}

// ---------------------------------------------------------------------------------------------
// Turning zod issues into lines

interface IssueContext {
  merged: Raw;
  provenance: Map<string, Source>;
  fileLayer: FileLayer | undefined;
}

type Issue = z.core.$ZodIssue;

function describeIssue(issue: Issue, context: IssueContext): string[] {
  const path = issue.path.map((segment) => (typeof segment === "number" ? segment : String(segment)));

  if (issue.code === "unrecognized_keys") {
    const allowed = allowedKeysAt(path);
    return issue.keys.map((key) => {
      const keyPath = [...path, key];
      const where = allowed ? ` (allowed ${path.length ? `in ${formatPath(path)}` : "at top level"}: ${allowed.join(", ")})` : "";
      const guess = allowed ? closest(key, allowed) : undefined;
      const hint = guess ? `; did you mean "${guess}"?` : "";
      return `${formatPath(keyPath)}: unknown option${hint}${where}${sourceSuffix(keyPath, context)}`;
    });
  }

  const pathText = formatPath(path);
  let text = issue.message;
  if (pathText && text.startsWith(`${pathText} `)) text = text.slice(pathText.length + 1);

  if (issue.code === "invalid_value" && text.startsWith("Invalid option")) {
    text = `must be one of ${issue.values.map(String).join(", ")}`;
  } else if (issue.code === "invalid_value" && !issue.values.every((value) => text.includes(String(value)))) {
    text += ` (allowed: ${issue.values.map(String).join(", ")})`;
  }

  const value = valueAt(context.merged, path);
  const missing = value === undefined && (issue.code === "invalid_type" || issue.code === "invalid_value");
  if (missing) {
    const detail = text.startsWith("Invalid input") ? "" : ` — ${text}`;
    return [`${pathText}: is required but not set${detail}${whereToSet(path)}`];
  }

  // Token hashes and upstream header values (credentials) are never echoed.
  const sensitive = (path[0] === "auth" && path[1] === "tokens") || (path[0] === "upstream" && path[1] === "headers");
  if (!sensitive && (typeof value === "string" || typeof value === "number" || typeof value === "boolean")) {
    text += `, got ${typeof value === "string" ? quote(value) : String(value)}`;
  }
  const source = findSource(path, context);
  return [`${pathText || "(top level)"}: ${text}${source ? sourceSuffix(path, context) : whereToSet(path)}`];
}

function whereToSet(path: Segment[]): string {
  const key = pathKey(path);
  const variable = ENV_VARS.find((name) => pathKey([...ENV_TABLE[name].path]) === key);
  return ` (set it in the config file${variable ? `, with ${variable}` : ""} or with a flag)`;
}

function findSource(path: Segment[], context: IssueContext): { source: Source; at: Segment[] } | undefined {
  for (let length = path.length; length > 0; length--) {
    const at = path.slice(0, length);
    const source = context.provenance.get(pathKey(at));
    if (source) return { source, at };
  }
  return undefined;
}

function sourceSuffix(path: Segment[], context: IssueContext): string {
  const found = findSource(path, context);
  if (!found) return "";
  const { source } = found;
  switch (source.kind) {
    case "env":
      return ` (from ${source.variable})`;
    case "flag":
      return source.flag ? ` (from flag ${source.flag})` : " (from command-line flags)";
    case "file": {
      const line = context.fileLayer ? lineOf(context.fileLayer, path) : undefined;
      return ` (from config file ${source.file}${line ? `, line ${line}` : ""})`;
    }
  }
}

/** Line of the option at `path` in the file (its key for mapping entries), when the YAML tree has it. */
function lineOf(layer: FileLayer, path: Segment[]): number | undefined {
  for (let length = path.length; length > 0; length--) {
    const parent = length === 1 ? layer.doc.contents : layer.doc.getIn(path.slice(0, length - 1), true);
    const last = path[length - 1];
    let offset: number | undefined;
    if (isMap(parent)) {
      const pair = parent.items.find((item) => {
        const key = item.key as { value?: unknown } | null;
        return key !== null && typeof key === "object" && String(key.value) === String(last);
      });
      offset = (pair?.key as { range?: [number, number, number] } | undefined)?.range?.[0];
    } else if (isSeq(parent) && typeof last === "number") {
      offset = (parent.items[last] as { range?: [number, number, number] } | undefined)?.range?.[0];
    }
    if (offset !== undefined) return layer.lines.linePos(offset).line;
  }
  return undefined;
}

/** Keys the schema allows in the object at `path` (for "unknown option" messages). */
function allowedKeysAt(path: Segment[]): string[] | undefined {
  let schema: unknown = ConfigSchema;
  for (const segment of [...path, undefined]) {
    // Peel wrappers (default, prefault, optional, ...) down to the object.
    for (let guard = 0; guard < 10; guard++) {
      const def = (schema as { _zod?: { def?: { type?: string; innerType?: unknown } } })._zod?.def;
      if (def?.innerType && def.type !== "object") schema = def.innerType;
      else break;
    }
    if (!(schema instanceof z.ZodObject)) return undefined;
    if (segment === undefined) return Object.keys(schema.shape);
    schema = (schema.shape as Record<string, unknown>)[String(segment)];
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

function isPlainObject(value: unknown): value is Raw {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function valueAt(root: unknown, path: Segment[]): unknown {
  let node = root;
  for (const segment of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[String(segment)];
  }
  return node;
}

const pathKey = (path: readonly Segment[]) => formatPath(path);

function formatPath(path: readonly Segment[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

function quote(text: string): string {
  const short = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  return JSON.stringify(short);
}

function typeName(value: unknown): string {
  return Array.isArray(value) ? "a list" : typeof value === "string" ? "a string" : typeof value;
}
