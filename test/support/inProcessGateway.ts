// taskgate in this process (startGateway) in front of any upstream URL: a blackhole, a dead port,
// a child-process legacy server. The config is the real schema's (ConfigSchema.parse), so an
// option taskgate does not know fails here with zod's message. Logs go to a LogCapture (and to
// stderr as well when TEST_LOG_LEVEL is set). close() is bounded.

import pino from "pino";
import { z } from "zod";
import { ConfigSchema } from "../../src/config/schema.js";
import { type Gateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/observability/logger.js";
import { LogCapture } from "./logCapture.js";
import { within } from "./waiting.js";

/**
 * The config input of a fault test, upstream.url aside (given separately). Typed loosely on
 * purpose: the tests set options SPEC-upstream.md adds before src/config/schema.ts has them; the
 * real schema still checks every key at run time (strict), so a misspelt option fails the test.
 */
export type FaultConfig = { upstream?: Record<string, unknown> } & Record<string, unknown>;

export interface FaultGateway {
  gateway: Gateway;
  /** http://127.0.0.1:<port>/mcp */
  url: string;
  logs: LogCapture;
  /** GET <path> on the gateway (/livez, /readyz, /healthz): status, content type and body (parsed when JSON). */
  get(path: string): Promise<Probe>;
  close(): Promise<void>;
}

export interface Probe {
  status: number;
  contentType: string;
  /** The JSON body; {} when the body is not JSON (see text). */
  body: Record<string, unknown>;
  text: string;
}

/** GET `url`, bounded at 10 s. */
export async function probe(url: string | URL): Promise<Probe> {
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const contentType = response.headers.get("content-type") ?? "";
  const text = await response.text();
  const body = contentType.includes("application/json") && text ? (JSON.parse(text) as Record<string, unknown>) : {};
  return { status: response.status, contentType, body, text };
}

export async function startFaultGateway(upstreamUrl: string, config: FaultConfig = {}): Promise<FaultGateway> {
  const input = { port: 0, auth: { mode: "demo" }, ...config, upstream: { ...config.upstream, url: upstreamUrl } };
  const checked = ConfigSchema.safeParse(input);
  if (!checked.success) throw new Error(`taskgate refuses this test's configuration:\n${z.prettifyError(checked.error)}`);
  const parsed = checked.data;
  const logs = new LogCapture();
  const level = process.env.TEST_LOG_LEVEL ?? "debug";
  const destination = process.env.TEST_LOG_LEVEL
    ? pino.multistream([
        { stream: logs, level: "trace" },
        { stream: process.stderr, level: "trace" },
      ])
    : logs;
  const gateway = await startGateway(parsed, { log: createLogger(level, destination) });
  return {
    gateway,
    url: gateway.url,
    logs,
    get: (path) => probe(new URL(path, gateway.url)),
    close: () => within(15_000, "closing taskgate", gateway.close()),
  };
}
