// The taskgate command: `serve` in front of a real upstream, `demo` with the bundled example
// legacy server, `hash-token` for the tokens identity mode. Configuration problems stop start-up
// with a message naming the option and what is allowed.

import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { dirname, join } from "node:path";
import { Command, InvalidArgumentError } from "commander";
import { sha256Hex } from "./auth/identity.js";
import { ConfigError, loadConfig, type ConfigOverrides } from "./config/loadConfig.js";
import type { Config } from "./config/schema.js";
import { startGateway } from "./gateway.js";

/** The package root: one level above src/cli.ts, two above the compiled dist/src/cli.js. */
const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = [join(HERE, ".."), join(HERE, "..", "..")].find((dir) => existsSync(join(dir, "package.json"))) ?? join(HERE, "..");
const FLAG_NAMES = { "upstream.url": "--upstream", port: "--port", host: "--host", "auth.mode": "--auth", "store.kind": "--store", "store.path": "--store-path", "store.url": "--store-url" };

const portNumber = (value: string) => {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError("must be an integer from 0 to 65535");
  return port;
};

/** TASKGATE_CONFIG names the config file; it is not itself an option. */
function environment(): { env: NodeJS.ProcessEnv; file?: string } {
  const { TASKGATE_CONFIG: file, ...env } = process.env;
  return file ? { env, file } : { env };
}

function configure(overrides: ConfigOverrides, file?: string): Config {
  const { env, file: envFile } = environment();
  const chosen = file ?? envFile;
  try {
    return loadConfig({ ...(chosen ? { file: chosen } : {}), env, overrides, flagNames: FLAG_NAMES });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`taskgate: invalid configuration\n${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

function stopOnSignals(stoppers: Array<() => Promise<void>>): void {
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    for (const s of stoppers) await s().catch(() => undefined);
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

const program = new Command("taskgate").description("MCP 2026-07-28 + Tasks gateway in front of a legacy MCP server");

program
  .command("serve")
  .description("run the gateway in front of a legacy MCP server")
  .option("--upstream <url>", "legacy MCP endpoint, e.g. http://127.0.0.1:8080/mcp")
  .option("--port <port>", "port to listen on (default 3000)", portNumber)
  .option("--host <host>", "address to bind (default 127.0.0.1)")
  .option("--config <file>", "YAML or JSON config file (also TASKGATE_CONFIG)")
  .option("--auth <mode>", "identity mode: demo | tokens")
  .option("--store <kind>", "task store: memory | file | redis")
  .option("--store-path <file>", "file of the file store")
  .option("--store-url <url>", "Redis of the redis store (default redis://127.0.0.1:6379)")
  .action(async (opts: { upstream?: string; port?: number; host?: string; config?: string; auth?: string; store?: string; storePath?: string; storeUrl?: string }) => {
    const config = configure(
      {
        ...(opts.upstream ? { upstream: { url: opts.upstream } } : {}),
        port: opts.port,
        host: opts.host,
        ...(opts.auth ? { auth: { mode: opts.auth as "demo" } } : {}),
        ...(opts.store || opts.storePath || opts.storeUrl ? { store: { kind: opts.store as "memory", path: opts.storePath, url: opts.storeUrl } } : {}),
      },
      opts.config,
    );
    const gateway = await startGateway(config);
    stopOnSignals([() => gateway.close()]);
  });

program
  .command("demo")
  .description("start the bundled example legacy server and taskgate in front of it (in-memory, demo identity)")
  .option("--port <port>", "taskgate port", portNumber, 3000)
  .option("--legacy-port <port>", "example legacy server port (0 = any free port)", portNumber, 0)
  .action(async (opts: { port: number; legacyPort: number }) => {
    const { startDemo } = (await import(demoModule())) as DemoModule;
    const demo = await startDemo({
      legacyPort: opts.legacyPort,
      configure: (upstreamUrl) => configure({ upstream: { url: upstreamUrl }, port: opts.port }, join(ROOT, "config", "demo.yaml")),
    });
    stopOnSignals([() => demo.close()]);
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
  startDemo(options: { legacyPort: number; configure: (upstreamUrl: string) => Config }): Promise<{ banner: string; close(): Promise<void> }>;
}

/** The demo module beside this file's tree (examples/demo), compiled or source. */
function demoModule(): string {
  const candidates = [join(HERE, "..", "examples", "demo.js"), join(HERE, "..", "examples", "demo.ts")];
  const found = candidates.find((file) => existsSync(file));
  if (!found) throw new Error("the demo needs the bundled example server (examples/demo), which this installation does not include; use `taskgate serve --upstream <url>`");
  return pathToFileURL(found).href;
}

program.parseAsync().catch((error: unknown) => {
  process.stderr.write(`taskgate: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
