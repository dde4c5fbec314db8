// How to start each legacy MCP server the real-server tests run against, all pinned as
// devDependencies: server-everything (Streamable HTTP mode), three SDK 1.x example servers, and our
// FastMCP fixture. Each starts on a fresh free loopback port; readiness lines and port variables
// are the ones these versions print (observed on the wire).

import { existsSync } from "node:fs";
import { join } from "node:path";
import { mainArgs } from "../fixtureModules.js";
import { freePort } from "../ports.js";
import { REPO } from "../repoRoot.js";
import { type ServerLaunch, type ServerProcess, startServerProcess } from "./serverProcess.js";

/** The installed package's directory (npm puts devDependencies in the repository's node_modules). */
function packageDir(name: string): string {
  const dir = join(REPO, "node_modules", ...name.split("/"));
  if (!existsSync(join(dir, "package.json"))) throw new Error(`${name} is not installed in ${dir}: run npm ci`);
  return dir;
}

const sdkExample = (file: string) => join(packageDir("@modelcontextprotocol/sdk"), "dist", "esm", "examples", "server", file);

export const LAUNCHES = {
  /** @modelcontextprotocol/server-everything: tools per client capability, session resources, tasks. */
  everything: () =>
    ({
      name: "server-everything",
      args: [join(packageDir("@modelcontextprotocol/server-everything"), "dist", "index.js"), "streamableHttp"],
      portVariable: "PORT",
      ready: /MCP Streamable HTTP Server listening on port \d+/,
    }) satisfies ServerLaunch,
  /** SDK example: register_user asks with server.elicitInput() (no relatedRequestId → GET stream). */
  elicitationFormExample: () =>
    ({
      name: "elicitationFormExample",
      args: [sdkExample("elicitationFormExample.js")],
      portVariable: "PORT",
      ready: /Form elicitation example server is running on/,
    }) satisfies ServerLaunch,
  /** SDK example: multi-greet logs on GET, collect-user-info asks on the call's POST stream. */
  simpleStreamableHttp: () =>
    ({
      name: "simpleStreamableHttp",
      args: [sdkExample("simpleStreamableHttp.js")],
      portVariable: "MCP_PORT",
      ready: /MCP Streamable HTTP Server listening on port \d+/,
    }) satisfies ServerLaunch,
  /** SDK example: task-only tools whose questions go out on GET once tasks/result is open. */
  simpleTaskInteractive: () =>
    ({
      name: "simpleTaskInteractive",
      args: [sdkExample("simpleTaskInteractive.js")],
      portVariable: "PORT",
      ready: /Starting server on http/,
    }) satisfies ServerLaunch,
  /** Ours, on FastMCP (test/support/fixtures/fastmcpServer.ts): context.elicit, progress, logs, stdout lines. */
  fastmcp: () =>
    ({
      name: "fastmcp fixture",
      args: mainArgs("fastmcpServer"),
      portVariable: "PORT",
      ready: /\[FastMCP info\] server is running on HTTP Stream at/,
    }) satisfies ServerLaunch,
  /** Ours, on the v2 SDK (test/fixtures/modernServer.ts): 2026-07-28 and, through the SDK's fallback, 2025-era clients. */
  modernDualEra: () =>
    ({
      name: "modern fixture (dual-era)",
      args: mainArgs("modernServer"),
      portVariable: "PORT",
      ready: /modern fixture listening on/,
    }) satisfies ServerLaunch,
  /** The same server, 2026-07-28 only (the SDK's legacy: 'reject'). */
  modernOnly: () =>
    ({
      name: "modern fixture (2026-only)",
      args: mainArgs("modernServer"),
      portVariable: "PORT",
      ready: /modern fixture listening on/,
      env: { LEGACY: "reject" },
    }) satisfies ServerLaunch,
  /** 2026-only and without the tasks extension: taskgate makes the tasks. */
  modernNoTasks: () =>
    ({
      name: "modern fixture (2026-only, no tasks)",
      args: mainArgs("modernServer"),
      portVariable: "PORT",
      ready: /modern fixture listening on/,
      env: { LEGACY: "reject", TASKS: "off" },
    }) satisfies ServerLaunch,
} as const;

export type ServerName = keyof typeof LAUNCHES;

/** Starts the named server on a free loopback port and waits until it is ready. */
export async function startThirdPartyServer(name: ServerName): Promise<ServerProcess> {
  return startServerProcess(LAUNCHES[name](), await freePort());
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
