// loadConfig: layering (defaults < file < env < flags) and one readable, source-naming line per problem.
// Each error test asserts the option path, the source (file + line, env var, or flag) and what is allowed.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { parse as parseYaml } from "yaml";
import { ConfigError, ENV_OPTIONS, ENV_VARS, loadConfig, loadConfigWithReport } from "../../src/config/loadConfig.js";
import { ConfigSchema } from "../../src/config/schema.js";
import { REPO } from "../support/repoRoot.js";

const dir = mkdtempSync(join(tmpdir(), "taskgate-config-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const configDir = join(REPO, "config");
const HASH = "e706f2008f191924f4f6d6107fa56e8677a25a416815975bb848eb48e9694416";

let counter = 0;
function write(ext: string, text: string): string {
  const file = join(dir, `config-${++counter}${ext}`);
  writeFileSync(file, text);
  return file;
}

const minimalYaml = "upstream:\n  url: http://127.0.0.1:9000/mcp\nauth:\n  mode: demo\n";
const minimalEnv = { TASKGATE_UPSTREAM_URL: "http://127.0.0.1:9000/mcp", TASKGATE_AUTH_MODE: "demo" };

/** Runs fn, asserts it throws ConfigError, and returns the error's lines. */
function problemsOf(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected ConfigError, got ${String(error)}`);
    assert.equal(error.message, error.problems.join("\n"));
    return error.problems;
  }
  assert.fail("expected loadConfig to throw");
}

/** The single line that mentions `needle`. */
function lineWith(problems: readonly string[], needle: string): string {
  const found = problems.filter((line) => line.includes(needle));
  assert.equal(found.length, 1, `expected one line with ${needle} in:\n${problems.join("\n")}`);
  return found[0] as string;
}

describe("loadConfig: layering", () => {
  it("fills every default when only the required options are given", () => {
    const config = loadConfig({ env: minimalEnv });
    assert.deepEqual(config, {
      upstream: {
        url: "http://127.0.0.1:9000/mcp",
        protocol: "auto",
        env: {},
        sessionsPer: "identity",
        maxSessions: 1000,
        maxProcesses: 100,
        stopGraceMs: 2_000,
        sessionIdleMs: 300_000,
        connectTimeoutMs: 5_000,
        connections: 64,
        initializeTimeoutMs: 15_000,
        requestTimeoutMs: 30_000,
        pingIntervalMs: 15_000,
        pingTimeoutMs: 10_000,
        cancelAttempts: 4,
        cancelRetryMs: 500,
        maxCallsPerSession: 500,
        headers: {},
        forwardAuthorization: false,
      },
      host: "127.0.0.1",
      port: 3000,
      path: "/mcp",
      bodyLimitBytes: 1_048_576,
      allowedOrigins: [],
      allowedHosts: [],
      access: { default: "allow", rules: [] },
      approvals: [],
      audit: { arguments: false },
      auth: { mode: "demo", tokens: [], requiredScopes: [] },
      legacy: { enabled: true, auth: "required" },
      quotas: {},
      store: {
        kind: "memory",
        path: ".taskgate/tasks.json",
        url: "redis://127.0.0.1:6379",
        prefix: "taskgate",
        leaseMs: 15_000,
        commandTimeoutMs: 5_000,
        redisReviveAfterMs: 8_000,
      },
      tasks: { policy: "auto", autoAfterMs: 1000, ttlMs: 3_600_000, pollIntervalMs: 5000, tools: {}, inputKeys: {} },
      mrtr: { holdTimeoutMs: 300_000 },
      http: { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000 },
      shutdown: { graceMs: 10_000 },
      subscriptions: { keepAliveMs: 15_000 },
      cache: { ttlMs: 60_000, cacheScope: "private" },
      log: { level: "info", format: "auto" },
      tracing: { enabled: false, serviceName: "taskgate" },
      inventory: { operators: { subjects: [], scopes: [], claims: {} } },
      notify: {
        webhooks: [],
        pushSubscriptionsPerIdentity: 10,
        timeoutMs: 5_000,
        attempts: 5,
        backoffMs: 1_000,
        maxBackoffMs: 60_000,
        queueSize: 1_000,
      },
      console: { enabled: true },
    });
  });

  it("reads a YAML file (.yaml and .yml) and deep-merges it over the defaults", () => {
    for (const ext of [".yaml", ".yml"]) {
      const file = write(ext, `${minimalYaml}port: 4000\ntasks:\n  ttlMs: 10\n  tools:\n    greet: never\n`);
      const config = loadConfig({ file });
      assert.equal(config.port, 4000);
      assert.equal(config.tasks.ttlMs, 10);
      assert.equal(config.tasks.policy, "auto"); // sibling default kept
      assert.deepEqual(config.tasks.tools, { greet: "never" });
    }
  });

  it("reads a JSON file", () => {
    const file = write(
      ".json",
      JSON.stringify({ upstream: { url: "https://up.example/mcp" }, auth: { mode: "demo" }, store: { kind: "file" } }),
    );
    const config = loadConfig({ file });
    assert.equal(config.upstream?.url, "https://up.example/mcp");
    assert.deepEqual(config.store, {
      kind: "file",
      path: ".taskgate/tasks.json",
      url: "redis://127.0.0.1:6379",
      prefix: "taskgate",
      leaseMs: 15_000,
      commandTimeoutMs: 5_000,
      redisReviveAfterMs: 8_000,
    });
  });

  it("treats an empty file as setting nothing", () => {
    const config = loadConfig({ file: write(".yaml", "# nothing here\n"), env: minimalEnv });
    assert.equal(config.port, 3000);
  });

  it("lets environment variables override the file, deep-merging objects", () => {
    const file = write(".yaml", `${minimalYaml}port: 4000\nhost: 0.0.0.0\ntasks:\n  policy: never\n  ttlMs: 10\n`);
    const config = loadConfig({
      file,
      env: {
        TASKGATE_PORT: "5000",
        TASKGATE_TASKS_POLICY: "always",
        TASKGATE_ALLOWED_ORIGINS: "https://a.example, https://b.example",
        TASKGATE_ALLOWED_HOSTS: "gw.internal:3000",
        TASKGATE_LOG_LEVEL: "debug",
        TASKGATE_CACHE_TTL_MS: "0",
        PATH: "/usr/bin", // non-TASKGATE variables are ignored
      },
    });
    assert.equal(config.port, 5000);
    assert.equal(config.host, "0.0.0.0"); // from the file
    assert.equal(config.tasks.policy, "always");
    assert.equal(config.tasks.ttlMs, 10); // file value in the same object survives
    assert.deepEqual(config.allowedOrigins, ["https://a.example", "https://b.example"]);
    assert.deepEqual(config.allowedHosts, ["gw.internal:3000"]);
    assert.equal(config.log.level, "debug");
    assert.equal(config.cache.ttlMs, 0);
  });

  it("maps every documented variable", () => {
    const config = loadConfig({
      env: {
        TASKGATE_UPSTREAM_URL: "http://up:1/mcp",
        TASKGATE_UPSTREAM_PROTOCOL: "modern",
        TASKGATE_UPSTREAM_SESSIONS_PER: "capabilities",
        TASKGATE_UPSTREAM_MAX_SESSIONS: "11",
        TASKGATE_UPSTREAM_SESSION_IDLE_MS: "12",
        TASKGATE_UPSTREAM_CONNECT_TIMEOUT_MS: "13",
        TASKGATE_UPSTREAM_INITIALIZE_TIMEOUT_MS: "14",
        TASKGATE_UPSTREAM_REQUEST_TIMEOUT_MS: "15",
        TASKGATE_UPSTREAM_PING_INTERVAL_MS: "16",
        TASKGATE_UPSTREAM_PING_TIMEOUT_MS: "17",
        TASKGATE_UPSTREAM_MAX_PROCESSES: "23",
        TASKGATE_UPSTREAM_STOP_GRACE_MS: "24",
        TASKGATE_HOST: "::1",
        TASKGATE_PORT: "1",
        TASKGATE_PATH: "/gw",
        TASKGATE_BODY_LIMIT_BYTES: "2048",
        TASKGATE_ALLOWED_ORIGINS: "https://o",
        TASKGATE_ALLOWED_HOSTS: "h",
        TASKGATE_AUTH_MODE: "tokens",
        TASKGATE_AUTH_TOKENS: `${HASH}:alice`,
        TASKGATE_AUTH_REQUIRED_SCOPES: "tools:call, admin",
        TASKGATE_STORE_KIND: "redis",
        TASKGATE_STORE_PATH: "/tmp/t.json",
        TASKGATE_STORE_URL: "rediss://redis.internal:6380/2",
        TASKGATE_STORE_PREFIX: "tg:prod",
        TASKGATE_STORE_LEASE_MS: "20000",
        TASKGATE_STORE_COMMAND_TIMEOUT_MS: "22",
        TASKGATE_STORE_REDIS_REVIVE_AFTER_MS: "1022",
        TASKGATE_TASKS_POLICY: "required",
        TASKGATE_TASKS_AUTO_AFTER_MS: "5",
        TASKGATE_TASKS_TTL_MS: "6",
        TASKGATE_TASKS_POLL_INTERVAL_MS: "7",
        TASKGATE_CACHE_TTL_MS: "8",
        TASKGATE_CACHE_SCOPE: "public",
        TASKGATE_CONSOLE_ENABLED: "false",
        TASKGATE_CONSOLE_OAUTH_CLIENT_ID: "taskgate-console",
        TASKGATE_CONSOLE_OAUTH_SCOPES: "tasks:read,tasks:answer",
        TASKGATE_LOG_LEVEL: "silent",
        TASKGATE_LOG_FORMAT: "json",
        TASKGATE_MRTR_SECRET: "0123456789abcdef0123456789abcdef",
        TASKGATE_MRTR_HOLD_TIMEOUT_MS: "9",
        TASKGATE_SUBSCRIPTIONS_KEEP_ALIVE_MS: "10",
        TASKGATE_HTTP_HEADERS_TIMEOUT_MS: "18",
        TASKGATE_HTTP_REQUEST_TIMEOUT_MS: "19",
        TASKGATE_HTTP_KEEP_ALIVE_TIMEOUT_MS: "20",
        TASKGATE_SHUTDOWN_GRACE_MS: "21",
        TASKGATE_UPSTREAM_CANCEL_ATTEMPTS: "26",
        TASKGATE_UPSTREAM_CANCEL_RETRY_MS: "27",
        TASKGATE_UPSTREAM_MAX_CALLS_PER_SESSION: "28",
        TASKGATE_UPSTREAM_CONNECTIONS: "29",
        TASKGATE_UPSTREAM_FORWARD_AUTHORIZATION: "true",
        TASKGATE_UPSTREAM_SUBJECT_HEADER: "X-User",
        TASKGATE_LEGACY_ENABLED: "FALSE",
        TASKGATE_LEGACY_AUTH: "open",
        TASKGATE_QUOTAS_MAX_RUNNING_TASKS: "23",
        TASKGATE_QUOTAS_MAX_HELD_CALLS: "24",
        TASKGATE_QUOTAS_REQUESTS_PER_MINUTE: "25",
        TASKGATE_TRACING_ENABLED: "true",
        TASKGATE_TRACING_SERVICE_NAME: "gateway-eu",
        TASKGATE_AUDIT_FILE: "/var/log/taskgate/audit.jsonl",
        TASKGATE_AUDIT_ARGUMENTS: "true",
        TASKGATE_INVENTORY_PUBLIC_URL: "https://gw.example.com/",
        TASKGATE_NOTIFY_TIMEOUT_MS: "26",
        TASKGATE_NOTIFY_ATTEMPTS: "3",
        TASKGATE_NOTIFY_BACKOFF_MS: "27",
        TASKGATE_NOTIFY_MAX_BACKOFF_MS: "28",
        TASKGATE_NOTIFY_QUEUE_SIZE: "29",
        TASKGATE_NOTIFY_PUSH_SUBSCRIPTIONS_PER_IDENTITY: "7",
      },
    });
    assert.deepEqual(config, {
      upstream: {
        url: "http://up:1/mcp",
        protocol: "modern",
        env: {},
        sessionsPer: "capabilities",
        maxSessions: 11,
        maxProcesses: 23,
        stopGraceMs: 24,
        sessionIdleMs: 12,
        connectTimeoutMs: 13,
        connections: 29,
        initializeTimeoutMs: 14,
        requestTimeoutMs: 15,
        pingIntervalMs: 16,
        pingTimeoutMs: 17,
        cancelAttempts: 26,
        cancelRetryMs: 27,
        maxCallsPerSession: 28,
        headers: {},
        forwardAuthorization: true,
        subjectHeader: "X-User",
      },
      legacy: { enabled: false, auth: "open" },
      quotas: { maxRunningTasks: 23, maxHeldCalls: 24, requestsPerMinute: 25 },
      host: "::1",
      port: 1,
      path: "/gw",
      bodyLimitBytes: 2048,
      allowedOrigins: ["https://o"],
      allowedHosts: ["h"],
      access: { default: "allow", rules: [] },
      approvals: [],
      audit: { file: "/var/log/taskgate/audit.jsonl", arguments: true },
      auth: { mode: "tokens", tokens: [{ sha256: HASH, subject: "alice" }], requiredScopes: ["tools:call", "admin"] },
      store: {
        kind: "redis",
        path: "/tmp/t.json",
        url: "rediss://redis.internal:6380/2",
        prefix: "tg:prod",
        leaseMs: 20_000,
        commandTimeoutMs: 22,
        redisReviveAfterMs: 1_022,
      },
      tasks: { policy: "required", autoAfterMs: 5, ttlMs: 6, pollIntervalMs: 7, tools: {}, inputKeys: {} },
      mrtr: { secret: "0123456789abcdef0123456789abcdef", holdTimeoutMs: 9 },
      http: { headersTimeoutMs: 18, requestTimeoutMs: 19, keepAliveTimeoutMs: 20 },
      shutdown: { graceMs: 21 },
      subscriptions: { keepAliveMs: 10 },
      cache: { ttlMs: 8, cacheScope: "public" },
      log: { level: "silent", format: "json" },
      tracing: { enabled: true, serviceName: "gateway-eu" },
      inventory: { operators: { subjects: [], scopes: [], claims: {} }, publicUrl: "https://gw.example.com/" },
      notify: { webhooks: [], pushSubscriptionsPerIdentity: 7, timeoutMs: 26, attempts: 3, backoffMs: 27, maxBackoffMs: 28, queueSize: 29 },
      console: { enabled: false, oauthClientId: "taskgate-console", oauthScopes: ["tasks:read", "tasks:answer"] },
    });
    // These, the 2 upstream.command ones and the 14 auth.jwt / resource metadata variables in the next tests.
    assert.equal(ENV_VARS.length, 85 + 1);
  });

  it("maps the stdio upstream's variables: the command line is split like a shell does, without one", () => {
    const config = loadConfig({
      env: {
        TASKGATE_AUTH_MODE: "demo",
        TASKGATE_UPSTREAM_COMMAND: `npx -y "@scope/my server" '/data dir' a\\ b`,
        TASKGATE_UPSTREAM_CWD: "/srv",
      },
    });
    assert.deepEqual(config.upstream?.command, ["npx", "-y", "@scope/my server", "/data dir", "a b"]);
    assert.equal(config.upstream?.cwd, "/srv");
    assert.equal(config.upstream?.url, undefined);
    const open = problemsOf(() => loadConfig({ env: { TASKGATE_AUTH_MODE: "demo", TASKGATE_UPSTREAM_COMMAND: "node 'server.js" } }));
    assert.match(
      lineWith(open, "TASKGATE_UPSTREAM_COMMAND"),
      /cannot be read as a command line.*single quote opened in it is never closed/,
    );
  });

  it("upstream.url and upstream.command together are refused, naming both and where each came from", () => {
    const file = write(".yaml", "upstream:\n  url: http://u/mcp\nauth:\n  mode: demo\n");
    const problems = problemsOf(() =>
      loadConfig({
        file,
        overrides: { upstream: { command: ["node", "server.js"] } },
        flagNames: { "upstream.command": "--upstream-command" },
      }),
    );
    assert.equal(problems.length, 1);
    assert.match(
      problems[0] as string,
      /^upstream\.command: upstream\.url and upstream\.command are mutually exclusive.*remove one \(from flag --upstream-command\)/,
    );
  });

  it("upstream credentials (HTTP headers) with upstream.command are refused, pointing to upstream.env", () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: { TASKGATE_AUTH_MODE: "demo", TASKGATE_UPSTREAM_COMMAND: "node server.js" },
        overrides: { upstream: { subjectHeader: "X-User" } },
      }),
    );
    assert.match(lineWith(problems, "upstream.subjectHeader"), /is only used with upstream\.url.*upstream\.env/);
  });

  it("upstream.env and upstream.cwd without upstream.command are refused", () => {
    const problems = problemsOf(() => loadConfig({ env: { ...minimalEnv, TASKGATE_UPSTREAM_CWD: "/srv" } }));
    assert.match(lineWith(problems, "upstream.cwd"), /is only used with upstream\.command/);
  });

  it("an empty command is refused", () => {
    const problems = problemsOf(() => loadConfig({ env: { TASKGATE_AUTH_MODE: "demo" }, overrides: { upstream: { command: [] } } }));
    assert.match(lineWith(problems, "upstream.command"), /must name the program to start/);
  });

  it("maps every auth.jwt and resource metadata variable", () => {
    const config = loadConfig({
      env: {
        TASKGATE_UPSTREAM_URL: "http://up:1/mcp",
        TASKGATE_AUTH_MODE: "jwt",
        TASKGATE_AUTH_JWT_JWKS_URL: "https://login.example.com/jwks",
        TASKGATE_AUTH_JWT_ISSUER: "https://login.example.com/",
        TASKGATE_AUTH_JWT_AUDIENCE: "https://gw.example.com/mcp, api://taskgate",
        TASKGATE_AUTH_JWT_ALGORITHMS: "RS256,ES256",
        TASKGATE_AUTH_JWT_CLOCK_TOLERANCE_SEC: "5",
        TASKGATE_AUTH_JWT_SUBJECT_CLAIM: "oid",
        TASKGATE_AUTH_JWT_JWKS_TIMEOUT_MS: "2500",
        TASKGATE_AUTH_JWT_JWKS_COOLDOWN_MS: "10000",
        TASKGATE_AUTH_JWT_VERIFIED_CACHE_MS: "0",
        TASKGATE_AUTH_RESOURCE: "https://gw.example.com/mcp",
        TASKGATE_AUTH_AUTHORIZATION_SERVERS: "https://login.example.com/",
        TASKGATE_AUTH_SCOPES_SUPPORTED: "tools:read,tools:call",
        TASKGATE_AUTH_RESOURCE_NAME: "Reports gateway",
      },
    });
    assert.deepEqual(config.auth, {
      mode: "jwt",
      tokens: [],
      requiredScopes: [],
      jwt: {
        jwksUrl: "https://login.example.com/jwks",
        issuer: "https://login.example.com/",
        audience: ["https://gw.example.com/mcp", "api://taskgate"],
        algorithms: ["RS256", "ES256"],
        clockToleranceSec: 5,
        subjectClaim: "oid",
        jwksTimeoutMs: 2500,
        jwksCooldownMs: 10_000,
        verifiedCacheMs: 0,
      },
      resourceMetadata: {
        resource: "https://gw.example.com/mcp",
        authorizationServers: ["https://login.example.com/"],
        scopesSupported: ["tools:read", "tools:call"],
        resourceName: "Reports gateway",
      },
    });
    const publicKey = loadConfig({
      env: {
        ...minimalEnv,
        TASKGATE_AUTH_MODE: "jwt",
        TASKGATE_AUTH_JWT_PUBLIC_KEY: "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----",
        TASKGATE_AUTH_JWT_ISSUER: "i",
        TASKGATE_AUTH_JWT_AUDIENCE: "a",
      },
    });
    assert.equal(publicKey.auth.jwt?.publicKey, "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----");
  });

  it("lets CLI overrides beat the environment, ignoring undefined flags", () => {
    const config = loadConfig({
      env: { ...minimalEnv, TASKGATE_PORT: "5000", TASKGATE_HOST: "0.0.0.0" },
      overrides: { port: 6000, host: undefined, tasks: { autoAfterMs: 0 } },
    });
    assert.equal(config.port, 6000);
    assert.equal(config.host, "0.0.0.0");
    assert.equal(config.tasks.autoAfterMs, 0);
    assert.equal(config.tasks.ttlMs, 3_600_000);
  });

  it("replaces arrays instead of concatenating them", () => {
    const file = write(".yaml", `${minimalYaml}allowedHosts: [a, b]\n`);
    const config = loadConfig({ file, env: { TASKGATE_ALLOWED_HOSTS: "c" } });
    assert.deepEqual(config.allowedHosts, ["c"]);
  });
});

describe("loadConfig: PORT, the platform convention", () => {
  it("sets the port when TASKGATE_PORT is not set, over the config file", () => {
    const file = write(".yaml", `${minimalYaml}port: 4000\n`);
    const { config, report } = loadConfigWithReport({ file, env: { PORT: "8080" } });
    assert.equal(config.port, 8080);
    assert.deepEqual(report.fromEnv, ["port (PORT)"]);
    assert.deepEqual(report.overridden, [{ option: "port", by: "PORT", over: `config file ${file}` }]);
  });

  it("loses to TASKGATE_PORT and to --port", () => {
    assert.equal(loadConfig({ env: { ...minimalEnv, PORT: "8080", TASKGATE_PORT: "5000" } }).port, 5000);
    assert.equal(loadConfig({ env: { ...minimalEnv, PORT: "8080" }, overrides: { port: 6000 } }).port, 6000);
  });

  it("empty is not set; anything but a whole number is refused naming PORT", () => {
    assert.equal(loadConfig({ env: { ...minimalEnv, PORT: " " } }).port, 3000);
    for (const value of ["http", "80.5", "-1"]) {
      const line = lineWith(
        problemsOf(() => loadConfig({ env: { ...minimalEnv, PORT: value } })),
        "PORT",
      );
      assert.equal(line, `PORT: must be an integer (option port, used when TASKGATE_PORT is not set), got ${JSON.stringify(value)}`);
    }
    const tooBig = lineWith(
      problemsOf(() => loadConfig({ env: { ...minimalEnv, PORT: "70000" } })),
      "port",
    );
    assert.match(tooBig, /^port: .*65535.*\(from PORT\)$/);
  });
});

describe("loadConfig: the report of where values came from", () => {
  it("names the options of each layer and every value a later layer replaced, never the values", () => {
    const secret = "0123456789abcdef0123456789abcdef-file";
    const file = write(
      ".yaml",
      `${minimalYaml}host: 127.0.0.1\nport: 4000\nmrtr:\n  secret: ${secret}\ntasks:\n  tools:\n    greet: never\n`,
    );
    const { report } = loadConfigWithReport({
      file,
      env: { TASKGATE_HOST: "0.0.0.0", TASKGATE_PORT: "4000", TASKGATE_MRTR_SECRET: `${secret}-env` },
      overrides: { host: "::", tasks: { policy: "always" } },
      flagNames: { host: "--host" },
    });
    assert.equal(report.file, file);
    assert.deepEqual(report.fromFile, ["upstream.url", "auth.mode", "tasks.tools.greet"]);
    assert.deepEqual(report.fromEnv, ["port (TASKGATE_PORT)", "mrtr.secret (TASKGATE_MRTR_SECRET)"]);
    assert.deepEqual(report.fromFlags, ["host (--host)", "tasks.policy"]);
    // port: the same value twice is no override; secrets are named, not shown.
    assert.deepEqual(report.overridden, [
      { option: "host", by: "TASKGATE_HOST", over: `config file ${file}` },
      { option: "mrtr.secret", by: "TASKGATE_MRTR_SECRET", over: `config file ${file}` },
      { option: "host", by: "flag --host", over: "TASKGATE_HOST" },
    ]);
    assert.ok(!JSON.stringify(report).includes(secret), "no value in the report");
    assert.deepEqual(report.ignored, []);
  });
});

describe("loadConfig: errors name the option, its source and what is allowed", () => {
  it("bad port from the file: path, file and line, and the limit", () => {
    const file = write(".yaml", `${minimalYaml}port: 99999\n`);
    const line = lineWith(
      problemsOf(() => loadConfig({ file })),
      "port",
    );
    assert.match(line, /^port: /);
    assert.match(line, /65535/);
    assert.ok(line.includes(`config file ${file}, line 5`), line);
  });

  it("bad port from env and from a flag name their source", () => {
    const fromEnv = lineWith(
      problemsOf(() => loadConfig({ env: { ...minimalEnv, TASKGATE_PORT: "70000" } })),
      "port",
    );
    assert.match(fromEnv, /^port: .*65535.*\(from TASKGATE_PORT\)$/);
    const fromFlag = lineWith(
      problemsOf(() => loadConfig({ env: minimalEnv, overrides: { port: -1 }, flagNames: { port: "--port" } })),
      "port",
    );
    assert.match(fromFlag, /^port: .*>=0.*\(from flag --port\)$/);
    const unnamedFlag = lineWith(
      problemsOf(() => loadConfig({ env: minimalEnv, overrides: { port: -1 } })),
      "port",
    );
    assert.match(unnamedFlag, /command-line flags/);
  });

  it("bad url", () => {
    const file = write(".yaml", "upstream:\n  url: ftp://legacy/mcp\nauth:\n  mode: demo\n");
    const line = lineWith(
      problemsOf(() => loadConfig({ file })),
      "upstream.url",
    );
    assert.match(line, /^upstream\.url: must be an http\(s\) URL/);
    assert.ok(line.includes('"ftp://legacy/mcp"'), line);
    assert.ok(line.includes(`config file ${file}, line 2`), line);
  });

  it("bad store.url names store.url and says redis://, from the file and from TASKGATE_STORE_URL", () => {
    const file = write(".yaml", `${minimalYaml}store:\n  kind: redis\n  url: http://x\n`);
    const line = lineWith(
      problemsOf(() => loadConfig({ file })),
      "store.url",
    );
    assert.match(line, /^store\.url: must be a redis:\/\/, rediss:\/\/, postgres:\/\/ or postgresql:\/\/ URL/);
    assert.ok(line.includes('"http://x"'), line);
    assert.ok(line.includes(`config file ${file}, line 7`), line);
    const fromEnv = lineWith(
      problemsOf(() => loadConfig({ env: { ...minimalEnv, TASKGATE_STORE_URL: "http://x" } })),
      "store.url",
    );
    assert.match(fromEnv, /^store\.url: .*redis:\/\/.*\(from TASKGATE_STORE_URL\)$/);
  });

  it("unknown key in the file names the key, the allowed keys and a likely fix", () => {
    const file = write(".yaml", `${minimalYaml}tasks:\n  pollIntervall: 3\nprot: 1\n`);
    const problems = problemsOf(() => loadConfig({ file }));
    const nested = lineWith(problems, "tasks.pollIntervall");
    assert.match(nested, /^tasks\.pollIntervall: unknown option/);
    assert.match(nested, /did you mean "pollIntervalMs"/);
    assert.match(nested, /allowed in tasks: policy, autoAfterMs, ttlMs, pollIntervalMs, tools, inputKeys/);
    assert.ok(nested.includes(`config file ${file}, line 6`), nested);
    const top = lineWith(problems, "prot");
    assert.match(top, /^prot: unknown option; did you mean "port"\? \(allowed at top level: upstream, host, port/);
    assert.ok(top.includes(`line 7`), top);
  });

  it("unknown TASKGATE_ variable names it and lists the known ones", () => {
    const problems = problemsOf(() => loadConfig({ env: { ...minimalEnv, TASKGATE_LOG_LEVL: "debug" } }));
    const line = lineWith(problems, "TASKGATE_LOG_LEVL");
    assert.match(line, /^TASKGATE_LOG_LEVL: unknown environment variable \(did you mean TASKGATE_LOG_LEVEL\?\)/);
    for (const name of ENV_VARS) assert.ok(line.includes(name), `${name} missing from: ${line}`);
  });

  it("non-integer env numbers name the variable", () => {
    for (const value of ["abc", "1.5", "1e3", "12x"]) {
      const line = lineWith(
        problemsOf(() => loadConfig({ env: { ...minimalEnv, TASKGATE_TASKS_TTL_MS: value } })),
        "TASKGATE",
      );
      assert.match(line, /^TASKGATE_TASKS_TTL_MS: must be an integer \(option tasks\.ttlMs\)/);
      assert.ok(line.includes(JSON.stringify(value)), line);
    }
  });

  it("reports every env problem at once", () => {
    const problems = problemsOf(() => loadConfig({ env: { TASKGATE_PORT: "x", TASKGATE_NOPE: "1" } }));
    assert.equal(problems.length, 2);
  });

  it("a bad enum lists the allowed values", () => {
    const fromEnv = lineWith(
      problemsOf(() => loadConfig({ env: { ...minimalEnv, TASKGATE_CACHE_SCOPE: "world" } })),
      "cache.cacheScope",
    );
    assert.equal(fromEnv, 'cache.cacheScope: must be one of public, private, got "world" (from TASKGATE_CACHE_SCOPE)');
    const file = write(".yaml", `${minimalYaml}tasks:\n  tools:\n    greet: sometimes\n`);
    const fromFile = lineWith(
      problemsOf(() => loadConfig({ file })),
      "tasks.tools.greet",
    );
    assert.match(fromFile, /must be one of never, auto, always, required/);
    assert.ok(fromFile.includes(`line 7`), fromFile);
    const mode = lineWith(
      problemsOf(() => loadConfig({ env: { ...minimalEnv, TASKGATE_AUTH_MODE: "sso" } })),
      "auth.mode",
    );
    assert.match(mode, /'demo'.*'tokens'.*"sso".*TASKGATE_AUTH_MODE/);
  });

  it("missing auth.mode (and missing upstream.url) say they are required and how to set them", () => {
    const problems = problemsOf(() => loadConfig({ file: write(".yaml", "port: 3000\n") }));
    assert.equal(problems.length, 2);
    const mode = lineWith(problems, "auth.mode");
    assert.match(mode, /^auth\.mode: is required but not set — must be chosen explicitly: 'demo' .*, 'tokens' .* or 'jwt'/);
    assert.match(mode, /TASKGATE_AUTH_MODE/);
    assert.match(
      lineWith(problems, "upstream.url"),
      /^upstream\.url: is required but not set — set upstream\.url .* or upstream\.command .*TASKGATE_UPSTREAM_URL/,
    );
    // An auth block without mode is reported the same way.
    const inBlock = problemsOf(() => loadConfig({ file: write(".yaml", "upstream:\n  url: http://u/\nauth: {}\n") }));
    assert.match(lineWith(inBlock, "auth.mode"), /^auth\.mode: is required but not set/);
  });

  it("tokens mode without tokens is refused", () => {
    const viaEnv = problemsOf(() => loadConfig({ env: { ...minimalEnv, TASKGATE_AUTH_MODE: "tokens" } }));
    assert.match(lineWith(viaEnv, "auth.tokens"), /^auth\.tokens: mode 'tokens' needs at least one token/);
    const file = write(".yaml", "upstream:\n  url: http://u/\nauth:\n  mode: tokens\n  tokens: []\n");
    const viaFile = lineWith(
      problemsOf(() => loadConfig({ file })),
      "auth.tokens",
    );
    assert.match(viaFile, /^auth\.tokens: mode 'tokens' needs at least one token/);
    assert.ok(viaFile.includes(`config file ${file}, line 5`), viaFile);
  });

  it("bad token entries: malformed env entry, bad hash, duplicate hash", () => {
    const env = { ...minimalEnv, TASKGATE_AUTH_MODE: "tokens" };
    const malformed = problemsOf(() => loadConfig({ env: { ...env, TASKGATE_AUTH_TOKENS: `${HASH}:alice,raw-secret` } }));
    assert.equal(malformed.length, 1);
    assert.match(malformed[0] as string, /^TASKGATE_AUTH_TOKENS: entry 2 must be "sha256hex:subject"/);
    assert.ok(!(malformed[0] as string).includes("raw-secret"), "the entry (maybe a secret) is not echoed");
    const badHash = problemsOf(() => loadConfig({ env: { ...env, TASKGATE_AUTH_TOKENS: "ABCD:alice" } }));
    assert.match(lineWith(badHash, "auth.tokens[0].sha256"), /64 lowercase hex.*\(from TASKGATE_AUTH_TOKENS\)$/);
    assert.ok(!badHash.join("\n").includes("ABCD"), "token material is not echoed");
    const duplicate = problemsOf(() => loadConfig({ env: { ...env, TASKGATE_AUTH_TOKENS: `${HASH}:alice,${HASH}:bob` } }));
    assert.match(lineWith(duplicate, "auth.tokens[1].sha256"), /duplicate token hash/);
  });

  it("mode jwt without auth.jwt names what it needs; auth.jwt with another mode is refused", () => {
    const missing = lineWith(
      problemsOf(() => loadConfig({ env: { ...minimalEnv, TASKGATE_AUTH_MODE: "jwt" } })),
      "auth.jwt",
    );
    assert.match(missing, /^auth\.jwt: mode 'jwt' needs auth\.jwt: issuer, audience, and jwksUrl or publicKey/);
    const file = write(
      ".yaml",
      `${minimalYaml}  jwt:\n    jwksUrl: https://idp.example/jwks\n    issuer: https://idp.example\n    audience: x\n`,
    );
    const stray = lineWith(
      problemsOf(() => loadConfig({ file })),
      "auth.jwt",
    );
    assert.match(stray, /^auth\.jwt: is only used with mode 'jwt' but auth\.mode is 'demo': set auth\.mode to jwt or remove auth\.jwt/);
    assert.ok(stray.includes(`config file ${file}, line 5`), stray);
  });

  const jwtYaml = (jwt: string) => write(".yaml", `upstream:\n  url: http://127.0.0.1:9000/mcp\nauth:\n  mode: jwt\n  jwt:\n${jwt}`);

  it("auth.jwt: issuer and audience are required, with the variable to set them", () => {
    const problems = problemsOf(() => loadConfig({ file: jwtYaml("    jwksUrl: https://idp.example/jwks\n") }));
    assert.match(lineWith(problems, "auth.jwt.issuer"), /^auth\.jwt\.issuer: is required but not set.*TASKGATE_AUTH_JWT_ISSUER/);
    assert.match(lineWith(problems, "auth.jwt.audience"), /^auth\.jwt\.audience: is required but not set.*TASKGATE_AUTH_JWT_AUDIENCE/);
  });

  it("auth.jwt: exactly one of jwksUrl and publicKey", () => {
    const neither = lineWith(
      problemsOf(() => loadConfig({ file: jwtYaml("    issuer: i\n    audience: a\n") })),
      "auth.jwt.jwksUrl",
    );
    assert.match(neither, /^auth\.jwt\.jwksUrl: set exactly one of auth\.jwt\.jwksUrl .* and auth\.jwt\.publicKey/);
    const both = problemsOf(() =>
      loadConfig({
        file: jwtYaml(
          "    issuer: i\n    audience: a\n    jwksUrl: https://idp.example/jwks\n    publicKey: '-----BEGIN PUBLIC KEY-----'\n",
        ),
      }),
    );
    assert.match(lineWith(both, "auth.jwt.jwksUrl"), /set exactly one of/);
  });

  it("auth.jwt.jwksUrl: https, or http on loopback only", () => {
    const env = { ...minimalEnv, TASKGATE_AUTH_MODE: "jwt", TASKGATE_AUTH_JWT_ISSUER: "i", TASKGATE_AUTH_JWT_AUDIENCE: "a" };
    const line = lineWith(
      problemsOf(() => loadConfig({ env: { ...env, TASKGATE_AUTH_JWT_JWKS_URL: "http://idp.example/jwks" } })),
      "auth.jwt.jwksUrl",
    );
    assert.match(
      line,
      /^auth\.jwt\.jwksUrl: must be https \(plain http is accepted only on a loopback host.*\(from TASKGATE_AUTH_JWT_JWKS_URL\)$/,
    );
    for (const url of ["http://127.0.0.1:8080/jwks", "http://[::1]:8080/jwks", "http://localhost/jwks", "https://idp.example/jwks"]) {
      assert.equal(loadConfig({ env: { ...env, TASKGATE_AUTH_JWT_JWKS_URL: url } }).auth.jwt?.jwksUrl, url);
    }
  });

  it("auth.jwt.algorithms: HS* and none are refused, saying why; defaults are asymmetric only", () => {
    const env = {
      ...minimalEnv,
      TASKGATE_AUTH_MODE: "jwt",
      TASKGATE_AUTH_JWT_ISSUER: "i",
      TASKGATE_AUTH_JWT_AUDIENCE: "a",
      TASKGATE_AUTH_JWT_JWKS_URL: "https://idp.example/jwks",
    };
    const problems = problemsOf(() => loadConfig({ env: { ...env, TASKGATE_AUTH_JWT_ALGORITHMS: "RS256,HS256,none" } }));
    assert.equal(problems.length, 2);
    assert.match(lineWith(problems, "auth.jwt.algorithms[1]"), /HS\* shared-secret algorithms and "none" are not accepted\), got "HS256"/);
    assert.match(lineWith(problems, "auth.jwt.algorithms[2]"), /got "none"/);
    const defaults = loadConfig({ env }).auth.jwt;
    assert.deepEqual(defaults?.algorithms, [
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
    ]);
    assert.equal(defaults?.clockToleranceSec, 30);
    assert.equal(defaults?.subjectClaim, "sub");
    assert.equal(defaults?.jwksTimeoutMs, 5000);
    assert.equal(defaults?.jwksCooldownMs, 30_000);
    assert.match(
      lineWith(
        problemsOf(() => loadConfig({ env: { ...env, TASKGATE_AUTH_JWT_CLOCK_TOLERANCE_SEC: "3600" } })),
        "clockToleranceSec",
      ),
      /300/,
    );
  });

  it("scopes must be RFC 6749 scope-tokens; resource metadata URLs are checked", () => {
    const scopes = problemsOf(() => loadConfig({ env: { ...minimalEnv, TASKGATE_AUTH_REQUIRED_SCOPES: 'ok,has space,quo"te' } }));
    assert.equal(scopes.length, 2);
    assert.match(
      lineWith(scopes, "auth.requiredScopes[1]"),
      /printable ASCII without spaces, quotes or backslashes.*\(from TASKGATE_AUTH_REQUIRED_SCOPES\)$/,
    );
    const file = write(
      ".yaml",
      `${minimalYaml}  resourceMetadata:\n    resource: https://gw.example/mcp#top\n    authorizationServers: [login]\n`,
    );
    const problems = problemsOf(() => loadConfig({ file }));
    assert.match(lineWith(problems, "auth.resourceMetadata.resource"), /must not contain a fragment/);
    assert.match(
      lineWith(problems, "auth.resourceMetadata.authorizationServers[0]"),
      /must be the issuer URL of an authorization server, got "login"/,
    );
  });

  it("missing file", () => {
    const file = join(dir, "does-not-exist.yaml");
    assert.deepEqual(
      problemsOf(() => loadConfig({ file })),
      [`config file not found: ${file}`],
    );
  });

  it("unsupported extension", () => {
    const file = write(".toml", "port = 1\n");
    assert.match(
      lineWith(
        problemsOf(() => loadConfig({ file })),
        file,
      ),
      /unsupported extension ".toml"/,
    );
  });

  it("YAML syntax error gives the line", () => {
    const file = write(".yaml", "upstream:\n  url: http://u/\nauth:\n  mode: [demo\n");
    const line = lineWith(
      problemsOf(() => loadConfig({ file })),
      file,
    );
    assert.match(
      line,
      new RegExp(`^config file ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: YAML syntax error at line \\d+, column \\d+: `),
    );
    const duplicateKey = write(".yaml", "port: 1\nport: 2\n");
    assert.match(
      lineWith(
        problemsOf(() => loadConfig({ file: duplicateKey })),
        "YAML",
      ),
      /at line 2, column 1/,
    );
  });

  it("JSON syntax error gives the line", () => {
    const file = write(".json", '{\n  "port": 3000,\n}\n');
    assert.match(
      lineWith(
        problemsOf(() => loadConfig({ file })),
        file,
      ),
      /JSON syntax error at line 3, column 1/,
    );
  });

  it("a file whose top level is not a mapping", () => {
    const file = write(".yaml", "- port\n- host\n");
    assert.match(
      lineWith(
        problemsOf(() => loadConfig({ file })),
        file,
      ),
      /top level must be a mapping/,
    );
  });

  it("a wrongly typed value says what was expected", () => {
    const file = write(".yaml", `${minimalYaml}port: "3000"\n`);
    assert.match(
      lineWith(
        problemsOf(() => loadConfig({ file })),
        "port",
      ),
      /^port: .*expected number, received string/,
    );
  });
});

describe("loadConfig: upstream credentials, legacy door, quotas", () => {
  const upstream = (extra: Record<string, unknown>) => ({ url: "http://127.0.0.1:9000/mcp", ...extra });

  it("`${NAME}` in an upstream header value is read from the environment; several, and text around them", () => {
    const config = loadConfig({
      env: { ...minimalEnv, TG_KEY: "k-1", TG_TENANT: "acme" },
      overrides: {
        upstream: upstream({ headers: { "X-Api-Key": "${TG_KEY}", "X-Tenant": "t=${TG_TENANT};k=${TG_KEY}", "X-Plain": "plain" } }),
      },
    });
    assert.deepEqual(config.upstream?.headers, { "X-Api-Key": "k-1", "X-Tenant": "t=acme;k=k-1", "X-Plain": "plain" });
  });

  it("an unset or empty variable is one problem each, naming the header, the variable and the file line", () => {
    const file = write(
      ".yaml",
      "upstream:\n  url: http://127.0.0.1:9000/mcp\n  headers:\n    X-Api-Key: ${TG_NOPE}\n    X-Other: ${TG_EMPTY}\nauth:\n  mode: demo\n",
    );
    const problems = problemsOf(() => loadConfig({ file, env: { TG_EMPTY: "" } }));
    assert.equal(problems.length, 2);
    assert.match(
      lineWith(problems, "TG_NOPE"),
      /^upstream\.headers\.X-Api-Key: environment variable TG_NOPE is not set \(the value refers to \$\{TG_NOPE\}\) \(from config file .*, line 4\)$/,
    );
    assert.match(lineWith(problems, "TG_EMPTY"), /^upstream\.headers\.X-Other: environment variable TG_EMPTY is not set/);
  });

  it("a header value that is not printable ASCII (a line break from a variable) is refused without echoing it", () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: { ...minimalEnv, TG_BAD: "s3cret\r\nX-Evil: 1" },
        overrides: { upstream: upstream({ headers: { "X-Api-Key": "${TG_BAD}" } }) },
      }),
    );
    assert.equal(problems.length, 1);
    assert.match(problems[0] as string, /^upstream\.headers\.X-Api-Key: must be printable ASCII/);
    assert.ok(!(problems[0] as string).includes("s3cret"), "the credential is never shown");
  });

  it("headers taskgate sets itself, a bad header name, and a subject header that clashes are refused", () => {
    const reserved = problemsOf(() =>
      loadConfig({ env: minimalEnv, overrides: { upstream: upstream({ headers: { "Mcp-Session-Id": "x" } }) } }),
    );
    assert.match(lineWith(reserved, "Mcp-Session-Id"), /'mcp-session-id' is set by taskgate itself/);
    const badName = problemsOf(() => loadConfig({ env: minimalEnv, overrides: { upstream: upstream({ headers: { "X Api": "x" } }) } }));
    assert.match(badName[0] as string, /must be an HTTP header name/);
    const clash = problemsOf(() =>
      loadConfig({ env: minimalEnv, overrides: { upstream: upstream({ headers: { "X-User": "svc" }, subjectHeader: "x-user" }) } }),
    );
    assert.match(lineWith(clash, "subjectHeader"), /also a static header in upstream\.headers/);
    const authorization = problemsOf(() =>
      loadConfig({ env: minimalEnv, overrides: { upstream: upstream({ subjectHeader: "Authorization" }) } }),
    );
    assert.match(lineWith(authorization, "subjectHeader"), /choose another name/);
  });

  it("forwarding the caller's Authorization and a static one: refused (never both by accident); forwarding with an API key is fine", () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: { ...minimalEnv, TASKGATE_UPSTREAM_FORWARD_AUTHORIZATION: "true" },
        overrides: { upstream: upstream({ headers: { Authorization: "Bearer svc" } }) },
      }),
    );
    assert.equal(problems.length, 1);
    assert.match(
      problems[0] as string,
      /^upstream\.forwardAuthorization: forwards the caller's Authorization, but upstream\.headers sets one too: choose one \(never both by accident\)/,
    );
    assert.ok(!(problems[0] as string).includes("svc"));
    const fine = loadConfig({
      env: { ...minimalEnv, TASKGATE_UPSTREAM_FORWARD_AUTHORIZATION: "true" },
      overrides: { upstream: upstream({ headers: { "X-Api-Key": "k" } }) },
    });
    assert.equal(fine.upstream?.forwardAuthorization, true);
  });

  it("true/false variables, legacy.auth values and quota bounds name what is allowed", () => {
    const bool = problemsOf(() => loadConfig({ env: { ...minimalEnv, TASKGATE_LEGACY_ENABLED: "yes" } }));
    assert.match(bool[0] as string, /^TASKGATE_LEGACY_ENABLED: must be true or false \(option legacy\.enabled\), got "yes"/);
    const mode = problemsOf(() => loadConfig({ env: { ...minimalEnv, TASKGATE_LEGACY_AUTH: "none" } }));
    assert.match(mode[0] as string, /^legacy\.auth: must be one of required, open/);
    const zero = problemsOf(() => loadConfig({ env: { ...minimalEnv, TASKGATE_QUOTAS_MAX_RUNNING_TASKS: "0" } }));
    assert.match(zero[0] as string, /^quotas\.maxRunningTasks: .*(>0|positive|greater than 0)/i);
  });
});

describe("example configs", () => {
  const example = join(configDir, "taskgate.example.yaml");

  it("config/taskgate.example.yaml sets every option of the schema to its default, the two required ones aside", () => {
    const data = parseYaml(readFileSync(example, "utf8")) as { upstream: { url: string }; auth: { mode: string } };
    const defaults = ConfigSchema.parse({ upstream: { url: data.upstream.url }, auth: { mode: "demo" } });
    // auth.mode has no default: the example shows "tokens" (with no token yet, the default list).
    assert.deepEqual(data, { ...defaults, auth: { mode: "tokens", tokens: [], requiredScopes: [] } });
    assert.equal(defaults.mrtr.secret, undefined, "mrtr.secret has no default: shown commented out");
    assert.match(readFileSync(example, "utf8"), /^ {2}# secret: /m);
  });

  it("config/taskgate.example.yaml names each option's environment variable", () => {
    const text = readFileSync(example, "utf8");
    for (const { variable, option } of ENV_OPTIONS)
      assert.ok(text.includes(`env: ${variable}`), `${variable} (${option}) is named in the example`);
  });

  it("config/taskgate.example.yaml asks for a token and loads once one is given", () => {
    const problems = problemsOf(() => loadConfig({ file: example }));
    assert.equal(problems.length, 1);
    assert.match(
      problems[0] as string,
      /^auth\.tokens: mode 'tokens' needs at least one token \(from config file .*taskgate\.example\.yaml, line \d+\)$/,
    );
    const config = loadConfig({ file: example, env: { TASKGATE_AUTH_TOKENS: `${HASH}:alice` } });
    assert.deepEqual(config.auth, { mode: "tokens", tokens: [{ sha256: HASH, subject: "alice" }], requiredScopes: [] });
  });

  it("the configuration reference (docs/configuration.md) has a row for every variable, with its option", () => {
    const readme = readFileSync(join(REPO, "docs", "configuration.md"), "utf8");
    for (const { variable, option } of ENV_OPTIONS) {
      assert.match(
        readme,
        new RegExp(`^\\| \`${option.replace(/\./g, "\\.")}\` \\| \`${variable}\``, "m"),
        `docs/configuration.md row for ${option} (${variable})`,
      );
    }
  });

  it("config/demo.yaml holds the demo's values", () => {
    const config = loadConfig({ file: join(configDir, "demo.yaml"), env: { TASKGATE_UPSTREAM_URL: "http://127.0.0.1:3001/mcp" } });
    assert.equal(config.auth.mode, "demo");
    assert.deepEqual(config.tasks.tools, { greet: "never", build_report: "always", run_suite: "always" });
  });

  it("config/tokens.example.yaml parses in tokens mode", () => {
    const config = loadConfig({ file: join(configDir, "tokens.example.yaml") });
    assert.equal(config.auth.mode, "tokens");
    assert.deepEqual(
      config.auth.tokens.map((token) => token.subject),
      ["alice", "bob"],
    );
  });

  it("config/access.example.yaml parses: bob denied deploy, deploy approved by the deployers scope, the caller confirms delete_*", () => {
    const config = loadConfig({ file: join(configDir, "access.example.yaml") });
    assert.deepEqual(config.access.rules, [{ subjects: ["bob"], deny: { tools: ["deploy"] } }]);
    assert.deepEqual(
      config.approvals.map((rule) => rule.approver),
      [{ scopes: ["deployers"] }, "caller"],
    );
    assert.equal(config.audit.file, ".taskgate/audit.jsonl");
  });

  it("config/jwt.example.yaml parses in jwt mode with every jwt option", () => {
    const config = loadConfig({ file: join(configDir, "jwt.example.yaml") });
    assert.equal(config.auth.mode, "jwt");
    assert.deepEqual(config.auth.jwt, {
      jwksUrl: "https://login.example.com/.well-known/jwks.json",
      issuer: "https://login.example.com/",
      audience: ["https://gateway.example.com/mcp"],
      algorithms: ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"],
      clockToleranceSec: 30,
      subjectClaim: "sub",
      jwksTimeoutMs: 5000,
      jwksCooldownMs: 30_000,
      verifiedCacheMs: 60_000,
    });
    assert.deepEqual(config.auth.requiredScopes, ["mcp:tools"]);
    assert.equal(config.auth.resourceMetadata?.resource, "https://gateway.example.com/mcp");
  });
});
