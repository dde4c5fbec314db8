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
import { Command, type CommanderError, InvalidArgumentError, Option } from "commander";
import type { Logger } from "pino";
import { sha256Hex } from "./auth/identity.js";
import { NO_TOKEN, readToken } from "./cli/tokenInput.js";
import { FLAG_NAMES, FLAGS, type FlagSpec, flagOverrides, flagsFor } from "./config/flags.js";
import { environmentHelp, fileOnlyHelp } from "./config/help.js";
import { ConfigError, type ConfigOverrides, type ConfigReport, loadConfigWithReport } from "./config/loadConfig.js";
import type { Config } from "./config/schema.js";
import { createFormattedLogger, resolveLogFormat } from "./observability/logger.js";

/** The package root: one level above src/cli.ts, two above the compiled dist/src/cli.js. */
const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = [join(HERE, ".."), join(HERE, "..", "..")].find((dir) => existsSync(join(dir, "package.json"))) ?? join(HERE, "..");

const EXIT_RUNTIME = 1;
const EXIT_USAGE = 2;
/** Beyond shutdown.graceMs, how long the rest of a stop may take (failing held tasks, closing
 *  upstream sessions and the store, each bounded by its own limit) before the process exits anyway. */
const STOP_MARGIN_MS = 15_000;

/** How long a stop may take in all: the grace, the last send of queued notifications (when any are configured), the margin. */
function stopLimitMs(config: Config): number {
  const notifies = config.notify.webhooks.length > 0 || config.notify.webPush !== undefined;
  return config.shutdown.graceMs + (notifies ? config.notify.timeoutMs : 0) + STOP_MARGIN_MS;
}

/** The demo's own port when --port is not given (it ignores TASKGATE_PORT: its URL is in the walkthrough). */
const DEMO_PORT = 3000;

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

function invalidConfiguration(problems: readonly string[]): never {
  process.stderr.write(`taskgate: invalid configuration\n${problems.join("\n")}\n`);
  process.exit(EXIT_USAGE);
}

/** The validated configuration, or exit 2 with one line per problem. */
function configure(overrides: ConfigOverrides, file?: string): { config: Config; report: ConfigReport } {
  const { env, file: envFile } = environment();
  const chosen = file ?? envFile;
  try {
    return loadConfigWithReport({ ...(chosen ? { file: chosen } : {}), env, overrides, flagNames: FLAG_NAMES });
  } catch (error) {
    if (error instanceof ConfigError) invalidConfiguration(error.problems);
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

/** An integer flag's reader as commander wants it: its error becomes "option '--port <port>' argument 'x' is invalid. …". */
const commanderParser = (parse: (text: string) => number) => (text: string) => {
  try {
    return parse(text);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
};

/** Commander options for the declared flags; `attribute` finds each one's parsed value again. */
function addFlags(command: Command, specs: readonly FlagSpec[]): Map<FlagSpec, string> {
  const attributes = new Map<FlagSpec, string>();
  for (const spec of specs) {
    const option = new Option(spec.flags, spec.description);
    if (spec.parseInteger) option.argParser(commanderParser(spec.parseInteger));
    command.addOption(option);
    attributes.set(spec, option.attributeName());
  }
  return attributes;
}

/** The flags given, as the overrides layer; exit 2 naming the option and flag when one cannot be read. */
function overridesOf(attributes: Map<FlagSpec, string>, opts: Record<string, unknown>): ConfigOverrides {
  const { overrides, problems } = flagOverrides([...attributes.keys()], (spec) => opts[attributes.get(spec) as string]);
  if (problems.length > 0) invalidConfiguration(problems);
  return overrides;
}

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
// Help text generated from the configuration's declarations (src/config/catalog.ts)

const SERVE_HELP = () => `
Required: auth.mode, and one of upstream.url (an HTTP server) or upstream.command (a server
taskgate starts and speaks stdio to), each from a flag, the config file or the environment —
or, in the config file, backends: a map of named servers (a fleet, docs/fleet.md).
Precedence: defaults < config file < environment variables < flags.

Environment variables:
${environmentHelp()}
  Kubernetes service-link variables (TASKGATE_SERVICE_HOST, TASKGATE_PORT=tcp://…) are ignored.

Only in a config file:
${fileOnlyHelp()}

Every option, what it does and its limits: docs/configuration.md.

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

const serve = program.command("serve").description("run the gateway in front of a legacy MCP server");
const serveFlags = addFlags(serve, FLAGS);
serve
  .option("--config <file>", "YAML or JSON config file (also TASKGATE_CONFIG)")
  .addHelpText("after", SERVE_HELP)
  .action(async (opts: Record<string, unknown> & { config?: string }) => {
    const overrides = overridesOf(serveFlags, opts);
    const { config, report } = configure(overrides, opts.config);
    const log = loggerFor(config);
    logReport(log, report);
    const stopper = stopOnSignals(log, stopLimitMs(config));
    // A fleet reloads its configuration file (on change and on SIGHUP) from the same sources.
    const file = opts.config ?? environment().file;
    const reloadConfig = () =>
      loadConfigWithReport({ ...(file ? { file } : {}), env: environment().env, overrides, flagNames: FLAG_NAMES }).config;
    // Loaded here, not at the top: --version, --help, hash-token and a configuration error need none of it.
    const { startGateway } = await import("./gateway.js");
    const gateway = await startGateway(config, { log, ...(file ? { configFile: file, reloadConfig } : {}) }).catch((error: unknown) =>
      failStart(error, () => "pass --port <n>, set TASKGATE_PORT, or set port in the config file (0 = any free port)"),
    );
    stopper.ready(() => gateway.close());
  });

const demo = program
  .command("demo")
  .description("start the bundled example legacy server and taskgate in front of it (in-memory, demo identity)");
const portArgument = commanderParser(flagsFor(["port"])[0]?.parseInteger ?? Number);
demo.option("--port <port>", `taskgate port (default ${DEMO_PORT}; TASKGATE_PORT does not change it)`, portArgument);
const demoFlags = addFlags(demo, flagsFor(["host", "log.level", "log.format"]));
demo
  .option("--legacy-port <port>", "example legacy server port (0 = any free port)", portArgument, 0)
  .action(async (opts: Record<string, unknown> & { port?: number; legacyPort: number }) => {
    const { startDemo } = (await import(demoModule())) as DemoModule;
    const port = opts.port ?? DEMO_PORT;
    let log: Logger | undefined;
    let stopper: Stopper | undefined;
    const running = await startDemo({
      legacyPort: opts.legacyPort,
      configure: (upstreamUrl) => {
        const overrides = { ...overridesOf(demoFlags, opts), upstream: { url: upstreamUrl }, port };
        const { config, report } = configure(overrides, join(ROOT, "config", "demo.yaml"));
        log = loggerFor(config);
        logReport(log, report);
        stopper = stopOnSignals(log, stopLimitMs(config));
        return config;
      },
      logger: () => log as Logger,
    }).catch((error: unknown) =>
      failStart(error, (failed) =>
        failed === opts.legacyPort ? "pass --legacy-port <n> (0 = any free port)" : "pass --port <n> (0 = any free port)",
      ),
    );
    stopper?.ready(() => running.close());
    process.stdout.write(running.banner);
  });

program
  .command("hash-token")
  .description("print the sha256 of a bearer token, for auth.tokens in tokens mode (the token from stdin, or a prompt)")
  .argument("[token]", "the token itself: works, but shell history and ps show it; prefer stdin")
  .action(async (argument: string | undefined) => {
    const token = await readToken(argument, { stdin: process.stdin, stderr: process.stderr });
    if (token === undefined) {
      process.stderr.write(`${NO_TOKEN}\n`);
      process.exit(EXIT_USAGE);
    }
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
    const missing = join(HERE, "..", "examples", "demo.js");
    process.stderr.write(
      `taskgate: cannot start the demo: it needs the bundled example server (${missing}), which this installation does not include.\n` +
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
