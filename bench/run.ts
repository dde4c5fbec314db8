// npm run bench: what taskgate's task machinery costs per request, measured against a bare
// server/discover on the same stack in the same run. Starts the example legacy server and a
// taskgate in front of it in this process (as test/e2e/kit.ts does: loopback, free ports,
// silent logs), warms up, then sends N rounds of three sequential requests, interleaved so
// drift hits every case alike:
//   discover   server/discover (answered from the cached upstream initialize result): the baseline
//   call→task  tools/call slow_echo (configured "always"; 10-minute upstream call) → CreateTaskResult
//   tasks/get  tasks/get on the task just created (status "working"), measured once the upstream
//              tool has started, so the upstream's own work on the new call (same process) is not
//              counted against it
// Prints p50 / p95 / mean per case and each one's ratio to the baseline. Every task is cancelled
// afterwards (tasks/cancel ⇒ notifications/cancelled upstream). Bounded: the process gives up
// after 60 s.
//
// Env: BENCH_N (measured rounds, default 300), BENCH_WARMUP (default 30),
//      BENCH_STORE=memory|file|redis (default memory; file = keyv-file in a temp dir, fsync per write;
//      redis = the several-instances store at REDIS_URL or 127.0.0.1:6379, under a fresh prefix).

import { createClient } from "@keyv/redis";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLegacyServer } from "../examples/legacy-server/server.js";
import { ConfigSchema } from "../src/config/schema.js";
import { startGateway } from "../src/gateway.js";
import { createLogger } from "../src/observability/logger.js";
import { PROTOCOL_VERSION, TASKS_EXTENSION, type JsonObject } from "../src/protocol/wire.js";

const BUDGET_MS = 60_000;
const N = positiveInt("BENCH_N", 300);
const WARMUP = positiveInt("BENCH_WARMUP", 30);
const STORE = process.env.BENCH_STORE ?? "memory";
if (STORE !== "memory" && STORE !== "file" && STORE !== "redis") throw new Error(`BENCH_STORE must be memory, file or redis, got ${STORE}`);
const REDIS_PREFIX = `taskgate-bench-${process.pid}-${Date.now()}`;
/** Long enough that no benchmarked call finishes on its own; all are cancelled at the end. */
const SLOW_ECHO_MS = 600_000;

const watchdog = setTimeout(() => {
  process.stderr.write(`bench: gave up after ${BUDGET_MS / 1000} s (lower BENCH_N)\n`);
  process.exit(1);
}, BUDGET_MS);
watchdog.unref();

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return value;
}

// ---- the stack -------------------------------------------------------------------------------

const storeDir = STORE === "file" ? await mkdtemp(join(tmpdir(), "taskgate-bench-")) : undefined;
const legacy = await startLegacyServer({ port: 0, host: "127.0.0.1", speed: 1 });
const gateway = await startGateway(
  ConfigSchema.parse({
    upstream: { url: legacy.url },
    host: "127.0.0.1",
    port: 0,
    auth: { mode: "demo" },
    store: storeDir
      ? { kind: "file", path: join(storeDir, "tasks.json") }
      : STORE === "redis"
        ? { kind: "redis", url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379", prefix: REDIS_PREFIX }
        : { kind: "memory" },
    tasks: { tools: { slow_echo: "always" } },
  }),
  { log: createLogger("silent") },
);
const url = gateway.url;
let upstreamStarted = 0;
legacy.events.on("tool-started", () => upstreamStarted++);

/** Resolves once the upstream has started `count` tool calls in all. */
async function upstreamHasStarted(count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (upstreamStarted < count) {
    if (Date.now() > deadline) throw new Error(`the upstream started ${upstreamStarted} of ${count} calls`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

// ---- one modern request ------------------------------------------------------------------------

const TASKS_CAPS = { extensions: { [TASKS_EXTENSION]: {} } };
let nextId = 1;

async function rpc(method: string, params: JsonObject, name?: string): Promise<JsonObject> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": PROTOCOL_VERSION,
      "Mcp-Method": method,
      ...(name !== undefined ? { "Mcp-Name": name } : {}),
      Authorization: "Bearer bench",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: nextId++,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
          "io.modelcontextprotocol/clientCapabilities": TASKS_CAPS,
        },
      },
    }),
  });
  const text = await response.text();
  if (!(response.headers.get("content-type") ?? "").includes("application/json")) {
    throw new Error(`${method}: expected a JSON answer, got ${response.status} ${text.slice(0, 200)}`);
  }
  const message = JSON.parse(text) as JsonObject;
  if (!message.result) throw new Error(`${method}: ${text.slice(0, 300)}`);
  return message.result as JsonObject;
}

const discover = () => rpc("server/discover", {});
const createTask = async (): Promise<string> => {
  const result = await rpc("tools/call", { name: "slow_echo", arguments: { text: "bench", ms: SLOW_ECHO_MS } }, "slow_echo");
  if (result.resultType !== "task" || typeof result.taskId !== "string") {
    throw new Error(`tools/call did not return a CreateTaskResult: ${JSON.stringify(result)}`);
  }
  return result.taskId;
};
const getTask = async (taskId: string) => {
  const task = await rpc("tasks/get", { taskId }, taskId);
  if (task.status !== "working") throw new Error(`tasks/get: expected a working task, got ${JSON.stringify(task)}`);
};

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

// ---- run ---------------------------------------------------------------------------------------

const samples = { discover: [] as number[], "call→task": [] as number[], "tasks/get": [] as number[] };
const taskIds: string[] = [];
const started = performance.now();
let exitCode = 0;

try {
  for (let round = 0; round < WARMUP + N; round++) {
    const measured = round >= WARMUP;
    const tDiscover = await timed(discover);
    let taskId = "";
    const tCall = await timed(async () => {
      taskId = await createTask();
    });
    taskIds.push(taskId);
    await upstreamHasStarted(taskIds.length);
    const tGet = await timed(() => getTask(taskId));
    if (measured) {
      samples.discover.push(tDiscover);
      samples["call→task"].push(tCall);
      samples["tasks/get"].push(tGet);
    }
  }
  const measuredMs = performance.now() - started;

  const cancelStart = performance.now();
  for (const taskId of taskIds) await rpc("tasks/cancel", { taskId }, taskId);
  const cancelMs = performance.now() - cancelStart;

  report(measuredMs, cancelMs);
  const { heldTasks } = (await (await fetch(new URL("/healthz", gateway.url))).json()) as { heldTasks: number };
  if (heldTasks !== 0) {
    process.stderr.write(`bench: ${heldTasks} task(s) still held after tasks/cancel\n`);
    exitCode = 1;
  }
} catch (error) {
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
  exitCode = 1;
} finally {
  await gateway.close();
  await legacy.close();
  if (storeDir) await rm(storeDir, { recursive: true, force: true });
  if (STORE === "redis") await dropRedisPrefix();
}
process.exit(exitCode);

/** Deletes the bench's keys (tasks expire anyway, after their ttl). */
async function dropRedisPrefix(): Promise<void> {
  const client = createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
  await client.connect();
  for await (const keys of client.scanIterator({ MATCH: `${REDIS_PREFIX}*`, COUNT: 500 })) if (keys.length > 0) await client.del(keys);
  await client.close();
}

// ---- report ------------------------------------------------------------------------------------

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? NaN;
}

function stats(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    mean: sorted.reduce((sum, v) => sum + v, 0) / sorted.length,
  };
}

function report(measuredMs: number, cancelMs: number): void {
  const base = stats(samples.discover);
  const ms = (v: number) => v.toFixed(3).padStart(8);
  const x = (v: number) => `${v.toFixed(2)}x`.padStart(8);
  const lines = [
    `taskgate bench — node ${process.version}, store ${STORE}, loopback, ${N} measured rounds after ${WARMUP} warm-up`,
    `each round: server/discover, tools/call (→ task), tasks/get; times in ms, client-side (fetch, keep-alive)`,
    "",
    `${"case".padEnd(11)}${"p50".padStart(8)}${"p95".padStart(9)}${"mean".padStart(9)}  ${"p50/base".padStart(8)}${"mean/base".padStart(10)}`,
  ];
  for (const [name, values] of Object.entries(samples)) {
    const s = stats(values);
    lines.push(`${name.padEnd(11)}${ms(s.p50)} ${ms(s.p95)} ${ms(s.mean)}  ${x(s.p50 / base.p50)}  ${x(s.mean / base.mean)}`);
  }
  lines.push(
    "",
    `${taskIds.length} tasks created in ${(measuredMs / 1000).toFixed(1)} s (with warm-up), all cancelled in ${(cancelMs / 1000).toFixed(1)} s`,
  );
  process.stdout.write(lines.join("\n") + "\n");
}
