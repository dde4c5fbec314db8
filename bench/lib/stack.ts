// Starts the system under test in two processes: the example legacy server ("upstream") and a
// taskgate in front of it ("taskgate"), with the store chosen by BENCH_STORE. A file store gets a
// fresh temp dir and a Redis store a fresh key prefix, both undone by runCleanups().

import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@redis/client";
import { preloadFlags } from "./build.js";
import { type Child, spawnRole } from "./children.js";
import { onCleanup } from "./cleanup.js";
import { gatewayLogLevel, gatewayNodeFlags, phasesOn, redisUrl, storeKind } from "./knobs.js";

/**
 * taskgate's HTTP timeouts, raised from the defaults to 10 minutes. Before the upstream client was
 * rewritten (main 140eb53) its event loop stalled for 10–70 s at thousands of held tasks (about
 * 1 s at 10k since); a stall past keepAliveTimeout while a
 * client's next request already waits on the idle socket makes Node destroy the socket
 * (ECONNRESET), one past headersTimeout answers 408, and the run would end there. The bench's
 * client drops idle sockets after 2 s and sends whole requests at once, so nothing else changes;
 * the stalls are reported instead ("loop stall ms" in the scale scenario).
 */
const HARNESS_HTTP_TIMEOUTS = { headersTimeoutMs: 600_000, requestTimeoutMs: 600_000, keepAliveTimeoutMs: 600_000 };

export interface Stack {
  upstream: Child;
  gateway: Child;
  /** The taskgate with tracing on, when asked for (StackOptions.tracedTo), and its endpoint. */
  traced?: { gateway: Child; url: string };
  /** taskgate's MCP endpoint. */
  url: string;
  /** The example legacy server's MCP endpoint and port. */
  upstreamUrl: string;
  upstreamPort: number;
}

export interface StackOptions {
  /** Run taskgate with --expose-gc (memory figures after a full GC). */
  exposeGc?: boolean;
  /** Merged into taskgate's config (tasks, cache, …). */
  config?: Record<string, unknown>;
  /** Merged into taskgate's `upstream` section (next to the url). */
  upstream?: Record<string, unknown>;
  /** Also start a second taskgate, tracing on (every request sampled), exporting to this OTLP endpoint. */
  tracedTo?: string;
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const upstream = await spawnRole("upstream", "upstream.ts");
  const upstreamUrl = upstream.info.url as string;
  const config = {
    upstream: { url: upstreamUrl, ...options.upstream },
    host: "127.0.0.1",
    port: 0,
    auth: { mode: "demo" },
    store: await storeConfig(),
    tasks: { tools: { slow_echo: "always" } },
    http: HARNESS_HTTP_TIMEOUTS,
    ...options.config,
  };
  const gateway = await spawnRole("taskgate", "gateway.ts", {
    exposeGc: options.exposeGc ?? false,
    nodeFlags: [...gatewayNodeFlags(), ...phaseFlags()],
    args: { config, logLevel: gatewayLogLevel() },
  });
  const stack: Stack = { upstream, gateway, url: gateway.info.url as string, upstreamUrl, upstreamPort: upstream.info.port as number };
  if (options.tracedTo) {
    const traced = await spawnRole("taskgate-traced", "gateway.ts", {
      nodeFlags: gatewayNodeFlags(),
      args: { config: { ...config, tracing: { enabled: true } }, logLevel: gatewayLogLevel() },
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: options.tracedTo, OTEL_TRACES_SAMPLER: "always_on", OTEL_SERVICE_NAME: "taskgate-bench" },
    });
    stack.traced = { gateway: traced, url: traced.info.url as string };
  }
  return stack;
}

/** The phase timer preloaded into a process in the middle (BENCH_PHASES=1), else nothing. */
export const phaseFlags = (): string[] => (phasesOn() ? preloadFlags("lib/phases.ts") : []);

async function storeConfig(): Promise<Record<string, unknown>> {
  const kind = storeKind();
  if (kind === "file") {
    const dir = await mkdtemp(join(tmpdir(), "taskgate-bench-"));
    onCleanup(`temp dir ${dir}`, () => rm(dir, { recursive: true, force: true }));
    return { kind: "file", path: join(dir, "tasks.json") };
  }
  if (kind === "redis") {
    const prefix = `taskgate-bench-${process.pid}-${randomBytes(6).toString("hex")}`;
    onCleanup(`Redis keys ${prefix}*`, () => dropRedisPrefix(prefix));
    return { kind: "redis", url: redisUrl(), prefix };
  }
  return { kind: "memory" };
}

/** Deletes every key under the bench's prefix (tasks would expire anyway, after their ttl). */
async function dropRedisPrefix(prefix: string): Promise<void> {
  const client = createClient({ url: redisUrl() });
  await client.connect();
  try {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) if (keys.length > 0) await client.del(keys);
  } finally {
    await client.close();
  }
}
