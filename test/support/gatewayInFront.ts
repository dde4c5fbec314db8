// Starts a real taskgate (startGateway, the config parsed by ConfigSchema like the CLI does, demo
// auth, a free loopback port) in front of a given legacy MCP endpoint. Logs go to stderr when
// TEST_LOG_LEVEL is set; otherwise the last lines are kept for a timed-out request's error
// (recentLog.ts). inFrontOf() is the same for a describe, with a third-party server it starts.

import assert from "node:assert/strict";
import { after, before } from "node:test";
import { type ConfigInput, ConfigSchema } from "../../src/config/schema.js";
import { type Gateway, startGateway } from "../../src/gateway.js";
import { testGatewayLogger } from "./recentLog.js";
import type { ServerProcess } from "./servers/serverProcess.js";
import { type ServerName, startThirdPartyServer } from "./servers/thirdParty.js";
import { until } from "./waiting.js";

export type GatewayOptions = Omit<Partial<ConfigInput>, "upstream">;
/** The upstream options besides where it is (url or command). */
type UpstreamOptions = { upstream?: Omit<NonNullable<ConfigInput["upstream"]>, "url" | "command"> };

export function startGatewayInFront(upstreamUrl: string, options: GatewayOptions & UpstreamOptions = {}): Promise<Gateway> {
  const { upstream, ...rest } = options;
  return started(ConfigSchema.parse({ port: 0, auth: { mode: "demo" }, ...rest, upstream: { ...upstream, url: upstreamUrl } }));
}

/** A taskgate that starts `command` (argv) as its stdio upstream, one process per upstream session. */
export function startGatewayOnCommand(command: string[], options: GatewayOptions & UpstreamOptions = {}): Promise<Gateway> {
  const { upstream, ...rest } = options;
  return started(ConfigSchema.parse({ port: 0, auth: { mode: "demo" }, ...rest, upstream: { ...upstream, command } }));
}

/** Waits for /readyz 200: for a stdio upstream, the readiness check's own process has started and answered. A cold
 *  start on a loaded machine may miss upstream.initializeTimeoutMs once (each probe then starts a new process): a
 *  test that comes after it waits here (probes go on for a minute, a failure shows the last answer), not in its first
 *  call, whose time limit is for what it tests. */
export async function ready(gateway: Gateway): Promise<void> {
  let last = "";
  await until(60_000, "/readyz 200", async () => {
    const response = await fetch(new URL("/readyz", gateway.url));
    last = `${response.status} ${await response.text()}`;
    return response.status === 200 ? true : undefined;
  }).catch((error: Error) => assert.fail(`${error.message}; last answer: ${last}`));
}

async function started(config: Parameters<typeof startGateway>[0]): Promise<Gateway> {
  const { log, attach } = testGatewayLogger();
  const gateway = await startGateway(config, { log });
  attach(gateway.url);
  return gateway;
}

/** The third-party server and the taskgate in front of it that inFrontOf() started for a describe. */
export interface InFront {
  readonly server: ServerProcess;
  readonly gateway: Gateway;
}

/**
 * The one setup of the real-server suites: registers before/after hooks in the calling describe that
 * start the third-party server `name` and a taskgate in front of it, and close both afterwards.
 */
export function inFrontOf(name: ServerName, options: GatewayOptions & UpstreamOptions = {}): InFront {
  let server: ServerProcess | undefined;
  let gateway: Gateway | undefined;
  before(async () => {
    server = await startThirdPartyServer(name);
    gateway = await startGatewayInFront(server.url, options);
  });
  after(async () => {
    await gateway?.close();
    await server?.stop();
  });
  const started = <T>(part: T | undefined, what: string): T => {
    if (part === undefined) throw new Error(`${what} is not started (inFrontOf("${name}") runs in before())`);
    return part;
  };
  return {
    get server() {
      return started(server, `the ${name} server`);
    },
    get gateway() {
      return started(gateway, `the taskgate in front of ${name}`);
    },
  };
}
