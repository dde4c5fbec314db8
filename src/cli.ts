// The taskgate command: `serve` in front of a real upstream, `demo` with the bundled example
// legacy server, `hash-token` for the tokens identity mode.
//
// Exit status: 0 after a clean stop (SIGINT/SIGTERM) or for --help/--version; 2 for every usage
// or configuration error (commander's own errors included), with a message naming the option and
// what is allowed; 1 when starting or running fails (a taken port, an unreachable Redis), with a
// message naming the fix. Everything that stops start-up is plain text on stderr; once the gateway
// runs, it speaks through the pino log (JSON, or pretty lines at a terminal).

import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Command, type CommanderError, InvalidArgumentError } from "commander";
import type { Logger } from "pino";
import { sha256Hex } from "./auth/identity.js";
import { splitCommandLine } from "./config/commandLine.js";
import {
  ConfigError,
  type ConfigOverrides,
  type ConfigReport,
  ENV_OPTIONS,
  loadConfigWithReport,
  PORT_VARIABLE,
} from "./config/loadConfig.js";
import { type Config, ConfigSchema } from "./config/schema.js";
import { startGateway } from "./gateway.js";
import { createFormattedLogger, resolveLogFormat } from "./observability/logger.js";

/** The package root: one level above src/cli.ts, two above the compiled dist/src/cli.js. */
const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = [join(HERE, ".."), join(HERE, "..", "..")].find((dir) => existsSync(join(dir, "package.json"))) ?? join(HERE, "..");

const EXIT_RUNTIME = 1;
const EXIT_USAGE = 2;
/** Beyond shutdown.graceMs, how long the rest of a stop may take (failing held tasks, closing
 *  upstream sessions and the store, each bounded by its own limit) before the process exits anyway. */
const STOP_MARGIN_MS = 15_000;

const FLAG_NAMES = {
  "upstream.url": "--upstream",
  "upstream.command": "--upstream-command",
  port: "--port",
  host: "--host",
  "auth.mode": "--auth",
  "store.kind": "--store",
  "store.path": "--store-path",
  "store.url": "--store-url",
  "log.level": "--log-level",
  "log.format": "--log-format",
};

const portNumber = (value: string) => {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidArgumentError("must be an integer from 0 to 65535");
  return port;
};

function packageVersion(): string {
  return (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
}

// ---------------------------------------------------------------------------------------------
// Configuration and logging

/** TASKGATE_CONFIG names the config file; it is not itself an option. */
function environment(): { env: NodeJS.ProcessEnv; file?: string } {
  const { TASKGATE_CONFIG: file, ...env } = process.env;
  return file ? { env, file } : { env };
}

/** The validated configuration, or exit 2 with one line per problem. */
function configure(overrides: ConfigOverrides, file?: string): { config: Config; report: ConfigReport } {
  const { env, file: envFile } = environment();
  const chosen = file ?? envFile;
  try {
    return loadConfigWithReport({ ...(chosen ? { file: chosen } : {}), env, overrides, flagNames: FLAG_NAMES });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`taskgate: invalid configuration\n${error.message}\n`);
      process.exit(EXIT_USAGE);
    }
    throw error;
  }
}

function loggerFor(config: Config): Logger {
  return createFormattedLogger(config.log.level, resolveLogFormat(config.log.format, Boolean(process.stdout.isTTY)));
}

/** One line saying where the configuration came from (names, never values), and the ignored variables. */
function logReport(log: Logger, report: ConfigReport): void {
  for (const { variable, reason } of report.ignored) {
    log.debug({ event: "config.env.ignored", variable, reason }, "environment variable ignored");
  }
  log.info(
    {
      event: "config.loaded",
      file: report.file ?? null,
      fromFile: report.fromFile,
      fromEnv: report.fromEnv,
      fromFlags: report.fromFlags,
      overridden: report.overridden.map(({ option, by, over }) => `${option}: ${by} over ${over}`),
    },
    "configuration loaded (defaults < config file < environment < flags)",
  );
}

/** Flag values as config overrides; commander leaves absent flags undefined, which loadConfig ignores. */
interface CommonFlags {
  logLevel?: string;
  logFormat?: string;
}

/** --upstream-command's command line as the argv list upstream.command holds, or exit 2 saying why not. */
function commandFlag(line: string): string[] {
  try {
    return splitCommandLine(line);
  } catch (error) {
    process.stderr.write(
      `taskgate: invalid configuration\nupstream.command: cannot be read as a command line: ${(error as Error).message} (from --upstream-command)\n`,
    );
    process.exit(EXIT_USAGE);
  }
}

const logOverrides = (opts: CommonFlags): ConfigOverrides =>
  opts.logLevel || opts.logFormat ? { log: { level: opts.logLevel as "info", format: opts.logFormat as "auto" } } : {};

// ---------------------------------------------------------------------------------------------
// Start-up failures and stopping

interface ListenError extends Error {
  code?: string;
  port?: number;
  address?: string;
  hostname?: string;
}

/** What went wrong at start, phrased with the fix: which flag or variable to change. */
function startFailure(error: unknown, fixPort: (port: number | undefined) => string): string {
  const e = (error instanceof Error ? error : new Error(String(error))) as ListenError;
  const where = e.address !== undefined ? ` on ${e.address}` : "";
  switch (e.code) {
    case "EADDRINUSE":
      return `port ${e.port} is in use${where}: ${fixPort(e.port)}`;
    case "EACCES":
      return `no permission to listen on port ${e.port}${where} (ports below 1024 need privileges): ${fixPort(e.port)}`;
    case "EADDRNOTAVAIL":
      return `${e.address} is not an address of this machine: pass --host <address> or set TASKGATE_HOST (0.0.0.0 = every interface)`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `host ${JSON.stringify(e.hostname ?? "")} does not resolve: pass --host <address> or set TASKGATE_HOST`;
    default:
      return e.message || String(error);
  }
}

function failStart(error: unknown, fixPort: (port: number | undefined) => string): never {
  process.stderr.write(`taskgate: cannot start: ${startFailure(error, fixPort)}\n`);
  process.exit(EXIT_RUNTIME);
}

/** Set once the gateway runs: what a stop signal does. */
interface Stopper {
  ready(stop: () => Promise<void>): void;
}

/**
 * The stopper hook, installed before start-up so no signal is missed: on SIGINT/SIGTERM log
 * "shutting down", run `stop` (at once, or as soon as start-up hands it over), log "stopped",
 * exit 0. A second signal, a failing stop or one longer than `limitMs` exits 1 at once,
 * with a line saying why.
 */
function stopOnSignals(log: Logger, limitMs: number): Stopper {
  let stop: (() => Promise<void>) | undefined;
  let signalled: { signal: NodeJS.Signals; at: number } | undefined;
  const run = (fn: () => Promise<void>, at: number) =>
    fn().then(
      () => {
        log.info({ event: "gateway.stopped", ms: Date.now() - at }, "taskgate stopped");
        process.exit(0);
      },
      (error: unknown) => {
        log.error({ event: "gateway.stop_failed", err: error instanceof Error ? error.message : String(error) }, "shutdown failed");
        process.exit(EXIT_RUNTIME);
      },
    );
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      log.warn({ event: "gateway.stop_forced", signal }, `${signal} during shutdown: exiting without finishing it`);
      process.exit(EXIT_RUNTIME);
    }
    signalled = { signal, at: Date.now() };
    log.info({ event: "gateway.stopping", signal }, "shutting down");
    setTimeout(() => {
      log.error({ event: "gateway.stop_timeout", limitMs }, `shutdown did not finish within ${limitMs} ms; exiting`);
      process.exit(EXIT_RUNTIME);
    }, limitMs).unref();
    if (stop) void run(stop, signalled.at);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    ready(fn) {
      stop = fn;
      if (signalled) void run(fn, signalled.at);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Help text generated from the configuration's own tables

/** Options without a default that taskgate cannot start without. */
const REQUIRED = new Set(["auth.mode"]);
const DEFAULT_NOTES: Record<string, string> = {
  "mrtr.secret": "random per start",
  "upstream.url": "required unless upstream.command is set",
  "upstream.command": "required unless upstream.url is set",
  "upstream.cwd": "taskgate's",
};
const KIND_NOTES: Record<string, string> = {
  list: "comma-separated",
  tokens: "sha256hex:subject,…",
  command: "a command line, split like a shell does (quotes, no variables)",
};

function defaultOf(defaults: unknown, option: string): string {
  if (REQUIRED.has(option)) return "required";
  const note = DEFAULT_NOTES[option];
  if (note) return note.startsWith("required") ? note : `default: ${note}`;
  const value = option.split(".").reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], defaults);
  if (Array.isArray(value)) return value.length === 0 ? "default: none" : `default: ${value.join(",")}`;
  return `default: ${String(value)}`;
}

/** Every TASKGATE_* variable, the option it sets and its default: from loadConfig's table and the schema. */
function environmentHelp(): string {
  const defaults = ConfigSchema.parse({ upstream: { url: "http://placeholder.invalid/" }, auth: { mode: "demo" } });
  const rows: Array<[string, string]> = [["TASKGATE_CONFIG", "the config file (like --config)"]];
  for (const { variable, option, kind } of ENV_OPTIONS) {
    const notes = [KIND_NOTES[kind], defaultOf(defaults, option)].filter(Boolean).join("; ");
    rows.push([variable, `${option} (${notes})`]);
    if (option === "port") rows.push([PORT_VARIABLE, "port, when TASKGATE_PORT is not set"]);
  }
  const width = Math.max(...rows.map(([name]) => name.length)) + 2;
  return rows.map(([name, text]) => `  ${name.padEnd(width)}${text}`).join("\n");
}

const SERVE_HELP = () => `
Required: auth.mode, and one of upstream.url (an HTTP server) or upstream.command (a server
taskgate starts and speaks stdio to), each from a flag, the config file or the environment.
Precedence: defaults < config file < environment variables < flags.

Environment variables:
${environmentHelp()}
  Kubernetes service-link variables (TASKGATE_SERVICE_HOST, TASKGATE_PORT=tcp://…) are ignored.

Exit status: 0 after a clean stop (SIGINT/SIGTERM), 2 for a usage or configuration error,
1 when starting or running fails (e.g. the port is in use).`;

// ---------------------------------------------------------------------------------------------
// Commands

const program = new Command("taskgate")
  .description("MCP 2026-07-28 + Tasks gateway in front of a legacy MCP server")
  // Before any .command(): subcommands inherit these settings.
  .exitOverride((error: CommanderError) => process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE))
  .allowExcessArguments(false)
  .showHelpAfterError("(add --help for usage)")
  .version(packageVersion(), "-V, --version", "print taskgate's version");

const addLogFlags = (command: Command) =>
  command
    .option("--log-level <level>", "fatal | error | warn | info | debug | trace | silent (default info)")
    .option("--log-format <format>", "json | pretty | auto (default auto: pretty when stdout is a terminal, else json)");

addLogFlags(
  program
    .command("serve")
    .description("run the gateway in front of a legacy MCP server")
    .option("--upstream <url>", "legacy MCP endpoint, e.g. http://127.0.0.1:8080/mcp (this or --upstream-command)")
    .option(
      "--upstream-command <command line>",
      'start a stdio MCP server per upstream session, e.g. "npx -y @modelcontextprotocol/server-filesystem /data"',
    )
    .option(
      "--auth <mode>",
      "(required) identity mode: tokens (bearer tokens checked against auth.tokens) | demo (the token is the user name; development only)",
    )
    .option("--port <port>", "port to listen on (default 3000; 0 = any free port)", portNumber)
    .option("--host <host>", "address to bind (default 127.0.0.1; 0.0.0.0 = every interface)")
    .option("--config <file>", "YAML or JSON config file (also TASKGATE_CONFIG)")
    .option("--store <kind>", "task store: memory | file | redis (default memory)")
    .option("--store-path <file>", "file of the file store (default .taskgate/tasks.json)")
    .option("--store-url <url>", "Redis of the redis store (default redis://127.0.0.1:6379)"),
)
  .addHelpText("after", SERVE_HELP)
  .action(
    async (
      opts: CommonFlags & {
        upstream?: string;
        upstreamCommand?: string;
        port?: number;
        host?: string;
        config?: string;
        auth?: string;
        store?: string;
        storePath?: string;
        storeUrl?: string;
      },
    ) => {
      const { config, report } = configure(
        {
          ...(opts.upstream || opts.upstreamCommand
            ? {
                upstream: {
                  url: opts.upstream,
                  command: opts.upstreamCommand === undefined ? undefined : commandFlag(opts.upstreamCommand),
                },
              }
            : {}),
          port: opts.port,
          host: opts.host,
          ...(opts.auth ? { auth: { mode: opts.auth as "demo" } } : {}),
          ...(opts.store || opts.storePath || opts.storeUrl
            ? { store: { kind: opts.store as "memory", path: opts.storePath, url: opts.storeUrl } }
            : {}),
          ...logOverrides(opts),
        },
        opts.config,
      );
      const log = loggerFor(config);
      logReport(log, report);
      const stopper = stopOnSignals(log, config.shutdown.graceMs + STOP_MARGIN_MS);
      const gateway = await startGateway(config, { log }).catch((error: unknown) =>
        failStart(error, () => "pass --port <n>, set TASKGATE_PORT, or set port in the config file (0 = any free port)"),
      );
      stopper.ready(() => gateway.close());
    },
  );

addLogFlags(
  program
    .command("demo")
    .description("start the bundled example legacy server and taskgate in front of it (in-memory, demo identity)")
    .option("--port <port>", "taskgate port", portNumber, 3000)
    .option("--legacy-port <port>", "example legacy server port (0 = any free port)", portNumber, 0),
).action(async (opts: CommonFlags & { port: number; legacyPort: number }) => {
  const { startDemo } = (await import(demoModule())) as DemoModule;
  let log: Logger | undefined;
  let stopper: Stopper | undefined;
  const demo = await startDemo({
    legacyPort: opts.legacyPort,
    configure: (upstreamUrl) => {
      const { config, report } = configure(
        { upstream: { url: upstreamUrl }, port: opts.port, ...logOverrides(opts) },
        join(ROOT, "config", "demo.yaml"),
      );
      log = loggerFor(config);
      logReport(log, report);
      stopper = stopOnSignals(log, config.shutdown.graceMs + STOP_MARGIN_MS);
      return config;
    },
    logger: () => log as Logger,
  }).catch((error: unknown) =>
    failStart(error, (port) =>
      port === opts.legacyPort ? "pass --legacy-port <n> (0 = any free port)" : "pass --port <n> (0 = any free port)",
    ),
  );
  stopper?.ready(() => demo.close());
  process.stdout.write(demo.banner);
});

program
  .command("hash-token")
  .description("print the sha256 of a bearer token, for auth.tokens in tokens mode")
  .argument("<token>")
  .action((token: string) => {
    process.stdout.write(`${sha256Hex(token)}\n`);
  });

/** What examples/demo exports (loaded at run time only: production code does not depend on it). */
interface DemoModule {
  startDemo(options: {
    legacyPort: number;
    configure: (upstreamUrl: string) => Config;
    logger: (config: Config) => Logger;
  }): Promise<{ banner: string; close(): Promise<void> }>;
}

/** The demo module beside this file's tree (examples/demo), compiled or source; exit 1 naming what is missing. */
function demoModule(): string {
  const candidates = [join(HERE, "..", "examples", "demo.js"), join(HERE, "..", "examples", "demo.ts")];
  const found = candidates.find((file) => existsSync(file));
  if (!found) {
    process.stderr.write(
      `taskgate: cannot start the demo: it needs the bundled example server (${join(HERE, "..", "examples", "demo.js")}), which this installation does not include.\n` +
        "Run taskgate in front of your own server instead: taskgate serve --upstream <url> --auth tokens (see taskgate serve --help).\n",
    );
    process.exit(EXIT_RUNTIME);
  }
  return pathToFileURL(found).href;
}

program.parseAsync().catch((error: unknown) => {
  process.stderr.write(`taskgate: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(EXIT_RUNTIME);
});
