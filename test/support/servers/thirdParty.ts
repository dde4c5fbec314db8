// How to start each legacy MCP server the real-server tests run against, all pinned as
// devDependencies: server-everything (Streamable HTTP mode), three SDK 1.x example servers, and our
// FastMCP fixture. Each starts on a fresh free loopback port; readiness lines and port variables
// are the ones these versions print (observed on the wire).

import { existsSync } from "node:fs";
import { join } from "node:path";
import { mainArgs } from "../fixtureModules.js";
import { onFreePort } from "../ports.js";
import { REPO } from "../repoRoot.js";
import { type ServerLaunch, type ServerProcess, startServerProcess } from "./serverProcess.js";

/** The installed package's directory (npm puts devDependencies in the repository's node_modules). */
function packageDir(name: string): string {
  const dir = join(REPO, "node_modules", ...name.split("/"));
  if (!existsSync(join(dir, "package.json"))) throw new Error(`${name} is not installed in ${dir}: run npm ci`);
  return dir;
}

const sdkExample = (file: string) => join(packageDir("@modelcontextprotocol/sdk"), "dist", "esm", "examples", "server", file);

/** One server: its name in messages, its argv (made at start: packageDir checks it is installed), port variable, readiness line, environment. */
type Row = [name: string, args: () => string[], portVariable: string, ready: RegExp, env?: Record<string, string>];

const HTTP_READY = /MCP Streamable HTTP Server listening on port \d+/;
const MODERN_READY = /modern fixture listening on/;
const modern = () => mainArgs("modernServer");

const ROWS = {
  /** @modelcontextprotocol/server-everything: tools per client capability, session resources, tasks. */
  everything: [
    "server-everything",
    () => [join(packageDir("@modelcontextprotocol/server-everything"), "dist", "index.js"), "streamableHttp"],
    "PORT",
    HTTP_READY,
  ],
  /** SDK example: register_user asks with server.elicitInput() (no relatedRequestId → GET stream). */
  elicitationFormExample: [
    "elicitationFormExample",
    () => [sdkExample("elicitationFormExample.js")],
    "PORT",
    /Form elicitation example server is running on/,
  ],
  /** SDK example: multi-greet logs on GET, collect-user-info asks on the call's POST stream. */
  simpleStreamableHttp: ["simpleStreamableHttp", () => [sdkExample("simpleStreamableHttp.js")], "MCP_PORT", HTTP_READY],
  /** SDK example: task-only tools whose questions go out on GET once tasks/result is open. */
  simpleTaskInteractive: ["simpleTaskInteractive", () => [sdkExample("simpleTaskInteractive.js")], "PORT", /Starting server on http/],
  /** Ours, on FastMCP (test/support/fixtures/fastmcpServer.ts): context.elicit, progress, logs, stdout lines. */
  fastmcp: ["fastmcp fixture", () => mainArgs("fastmcpServer"), "PORT", /\[FastMCP info\] server is running on HTTP Stream at/],
  /** Ours, on the v2 SDK (test/fixtures/modernServer.ts): 2026-07-28 and, through the SDK's fallback, 2025-era clients. */
  modernDualEra: ["modern fixture (dual-era)", modern, "PORT", MODERN_READY],
  /** The same server, 2026-07-28 only (the SDK's legacy: 'reject'). */
  modernOnly: ["modern fixture (2026-only)", modern, "PORT", MODERN_READY, { LEGACY: "reject" }],
  /** 2026-only and without the tasks extension: taskgate makes the tasks. */
  modernNoTasks: ["modern fixture (2026-only, no tasks)", modern, "PORT", MODERN_READY, { LEGACY: "reject", TASKS: "off" }],
} as const satisfies Record<string, Row>;

/** How to start each server, by name. */
export const LAUNCHES = Object.fromEntries(
  Object.entries(ROWS).map(([key, [name, args, portVariable, ready, env]]: [string, Row]) => [
    key,
    (): ServerLaunch => ({ name, args: args(), portVariable, ready, ...(env ? { env } : {}) }),
  ]),
) as { readonly [K in keyof typeof ROWS]: () => ServerLaunch };

export type ServerName = keyof typeof ROWS;

/** Starts the named server on a free loopback port and waits until it is ready. */
export async function startThirdPartyServer(name: ServerName): Promise<ServerProcess> {
  return onFreePort((port) => startServerProcess(LAUNCHES[name](), port));
}

/** The stdio servers, as the argv upstream.command takes (node itself, no npx: nothing to fetch). */
export const STDIO_COMMANDS = {
  /** server-everything in stdio mode: the same tools as over HTTP, one client per process. */
  everything: () => [process.execPath, join(packageDir("@modelcontextprotocol/server-everything"), "dist", "index.js"), "stdio"],
  /** server-filesystem serving `dir` (read, write, list inside it only). */
  filesystem: (dir: string) => [process.execPath, join(packageDir("@modelcontextprotocol/server-filesystem"), "dist", "index.js"), dir],
  /** @modelcontextprotocol/server-memory: a knowledge graph in MEMORY_FILE_PATH; memory://knowledge-graph is subscribable. */
  memory: () => [process.execPath, join(packageDir("@modelcontextprotocol/server-memory"), "dist", "index.js")],
  /** @modelcontextprotocol/server-sequential-thinking: keeps each client's thought history in its process. */
  sequentialThinking: () => [process.execPath, join(packageDir("@modelcontextprotocol/server-sequential-thinking"), "dist", "index.js")],
  /** Ours, on the SDK 1.x (test/support/fixtures/stdioListChangesServer.ts): add_tool changes its tool list. */
  listChanges: () => [process.execPath, ...mainArgs("stdioListChangesServer")],
} as const;
