// npx tsx bench/store.ts: what one task-store operation costs as the store fills up, per backend,
// each figure also as a ratio to the same backend's figure at the smallest size in the same run
// (a flat ratio of ~1.0x means the cost does not grow with the number of tasks).
//
// For each backend (memory; file = the durable journal, in a temp folder; redis = 127.0.0.1:6379 or
// REDIS_URL, under a fresh prefix deleted at the end) one store per size, filled with that many
// unfinished tasks (100, 1,000, 5,000, 10,000; 64 creates in flight), after a warm-up on a separate
// store. Then ROUNDS rounds of the cases below; the sequential ones alternate between the sizes
// operation by operation, so drift (a busy disk, a busy machine) hits all sizes alike:
//   create     sequential creates (each measured task is finished again, untimed, so the number of
//              unfinished tasks stays at the size): p50, p99
//   creates/s  per round BURSTS bursts of creates with 32 in flight per store (sized from the
//              warm-up, see MIN_BURST), alternating
//              between the stores (each finished again, untimed); the median of the rounds' rates
//   update     sequential progress writes (statusMessage) to random unfinished tasks: p50
//   listing    listByOwner of 50 of one owner's 60 tasks (spread through the store) in a store of
//              1,000 records and in one of 100,000 (BENCH_STORE_LIST_SIZES): p50 of LIST_N pages,
//              and the ratio of the big store's p50 to the small one's (~1.0x: cost follows the page)
// Backends postgres and keyv-postgres use a fresh database on 127.0.0.1:5432 (or PG_URL), dropped
// at the end; keyv-redis a fresh namespace on REDIS_URL.
// Bounded: gives up after BENCH_STORE_BUDGET_S (default 900) seconds.
//
// Env: BENCH_STORE_N (sequential operations per size and case, default 300),
//      BENCH_STORE_SIZES (default 100,1000,5000,10000), BENCH_STORE_LIST_SIZES (default 1000,100000),
//      BENCH_STORE_BACKENDS (default memory,file,redis,postgres,keyv-postgres,keyv-redis).

import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@redis/client";
import pg from "pg";
import { openPostgresPool } from "../src/cluster/postgresConnection.js";
import { createTaskStore } from "../src/tasks/stores/createTaskStore.js";
import { keyvAdapterFor } from "../src/tasks/stores/keyvAdapter.js";
import type { TaskRecord } from "../src/tasks/taskRecord.js";
import type { TaskStore } from "../src/tasks/taskStore.js";

const N = positiveInt("BENCH_STORE_N", 300);
const SIZES = list("BENCH_STORE_SIZES", "100,1000,5000,10000").map((s) => positiveInt("BENCH_STORE_SIZES", 0, s));
const LIST_SIZES = list("BENCH_STORE_LIST_SIZES", "1000,100000").map((s) => positiveInt("BENCH_STORE_LIST_SIZES", 0, s));
const BACKENDS = list("BENCH_STORE_BACKENDS", "memory,file,redis,postgres,keyv-postgres,keyv-redis");
const BUDGET_MS = positiveInt("BENCH_STORE_BUDGET_S", 900) * 1000;
const PG_URL = process.env.PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const LIST_N = 50;
const LIST_OWNER = "f".repeat(64);
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const REDIS_PREFIX = `taskgate-bench-store-${process.pid}-${Date.now()}`;
const FILL_CONCURRENCY = 64;
const RATE_CONCURRENCY = 32;
/**
 * Creates per burst: at least 160 (several fsync batches of 32, so a burst is not one disk flush
 * timed alone), and enough for ~20 ms at the backend's warm-up rate (so a fast backend's burst is
 * not one GC pause timed alone).
 */
const MIN_BURST = 160;
const BURST_TARGET_S = 0.02;
const BURSTS = 4;
const ROUNDS = 10;

const watchdog = setTimeout(() => {
  process.stderr.write(`bench/store: gave up after ${BUDGET_MS / 1000} s (lower BENCH_STORE_N or BENCH_STORE_SIZES)\n`);
  process.exit(1);
}, BUDGET_MS);
watchdog.unref();

function list(name: string, fallback: string): string[] {
  return (process.env[name] || fallback)
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

function positiveInt(name: string, fallback: number, raw = process.env[name]): number {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be positive integers, got ${raw}`);
  return value;
}

/** A record shaped like the ones TaskManager writes (~500 bytes of JSON). */
function newRecord(): TaskRecord {
  const now = new Date().toISOString();
  return {
    taskId: randomBytes(20).toString("base64url"),
    status: "working",
    createdAt: now,
    lastUpdatedAt: now,
    ttlMs: 3_600_000,
    pollIntervalMs: 5000,
    ownerHash: randomBytes(32).toString("hex"),
    tool: "slow_echo",
    holder: "bench-instance",
    version: 0,
  };
}

const finish = (record: TaskRecord): TaskRecord => ({
  ...record,
  status: "completed",
  result: { content: [{ type: "text", text: "done" }] },
});

interface Backend {
  /** A new, empty store; `name` keeps the stores of one backend apart. */
  open(name: string): Promise<TaskStore>;
  cleanup(): Promise<void>;
}

async function backend(name: string): Promise<Backend> {
  if (name === "memory") return { open: () => createTaskStore({ kind: "memory" }), cleanup: async () => undefined };
  if (name === "file") {
    const dir = await mkdtemp(join(tmpdir(), "taskgate-bench-store-"));
    return {
      open: (store) => createTaskStore({ kind: "file", path: join(dir, `${store}.json`) }),
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
  }
  if (name === "redis") {
    return {
      open: (store) =>
        createTaskStore({
          kind: "redis",
          connect: async () => {
            const client = createClient({ url: REDIS_URL });
            await client.connect();
            return client;
          },
          label: REDIS_URL,
          prefix: `${REDIS_PREFIX}:${store}`,
          instanceId: "bench-instance",
        }),
      cleanup: dropRedisPrefix,
    };
  }
  if (name === "postgres" || name === "keyv-postgres") {
    const databases: string[] = [];
    return {
      open: async (store) => {
        const url = await createDatabase(`${REDIS_PREFIX}-${store}`.replace(/[^a-z0-9]/gi, "_").toLowerCase());
        databases.push(url);
        if (name === "keyv-postgres") return createTaskStore({ kind: "keyv", adapter: await keyvAdapterFor(url), label: url });
        return createTaskStore({
          kind: "postgres",
          connect: () => openPostgresPool({ url, commandTimeoutMs: 30_000, max: 8 }),
          instanceId: "bench-instance",
        });
      },
      cleanup: () => dropDatabases(databases),
    };
  }
  if (name === "keyv-redis") {
    return {
      open: async (store) =>
        createTaskStore({
          kind: "keyv",
          adapter: await keyvAdapterFor(REDIS_URL),
          label: REDIS_URL,
          namespace: `${REDIS_PREFIX}:${store}`,
        }),
      cleanup: dropRedisPrefix,
    };
  }
  throw new Error(`BENCH_STORE_BACKENDS: unknown backend ${name} (memory, file, redis, postgres, keyv-postgres, keyv-redis)`);
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

async function createDatabase(name: string): Promise<string> {
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabases(urls: string[]): Promise<void> {
  for (const url of urls) await adminQuery(`DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
}

async function dropRedisPrefix(): Promise<void> {
  const client = createClient({ url: REDIS_URL });
  await client.connect();
  for await (const keys of client.scanIterator({ MATCH: `${REDIS_PREFIX}*`, COUNT: 500 })) if (keys.length > 0) await client.del(keys);
  await client.close();
}

/** Runs `work` on each item with at most `limit` in flight. */
async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

interface Samples {
  size: number;
  store: TaskStore;
  unfinished: TaskRecord[];
  createMs: number[];
  updateMs: number[];
  /** creates/s of each round's burst (the median is reported: one GC pause would skew a total). */
  burstRates: number[];
}

async function fill(store: TaskStore, size: number): Promise<TaskRecord[]> {
  const records = Array.from({ length: size }, newRecord);
  await pool(records, FILL_CONCURRENCY, (record) => store.create(record));
  return records;
}

/**
 * One round of each case. Sequential cases alternate between the stores operation by operation, so a
 * slow moment of the disk or of Redis hits every size alike; samples accumulate across rounds.
 */
async function measureRound(all: Samples[], n: number, burstSize: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    for (const s of all) {
      const record = newRecord();
      const started = performance.now();
      await s.store.create(record);
      s.createMs.push(performance.now() - started);
      await s.store.update(record.taskId, finish);
    }
  }

  const burstMs = all.map(() => 0);
  for (let k = 0; k < BURSTS; k++) {
    // Every other pass in reverse order, so no size always runs right after the biggest one.
    const order = k % 2 === 0 ? [...all.entries()] : [...all.entries()].reverse();
    for (const [index, s] of order) {
      const burst = Array.from({ length: burstSize }, newRecord);
      const started = performance.now();
      await pool(burst, RATE_CONCURRENCY, (record) => s.store.create(record));
      burstMs[index]! += performance.now() - started;
      await pool(burst, RATE_CONCURRENCY, (record) => s.store.update(record.taskId, finish));
    }
  }
  all.forEach((s, index) => s.burstRates.push((burstSize * BURSTS) / (burstMs[index]! / 1000)));

  for (let i = 0; i < n; i++) {
    for (const s of all) {
      const target = s.unfinished[Math.floor(Math.random() * s.unfinished.length)]!;
      const started = performance.now();
      await s.store.update(target.taskId, (current) => ({
        ...current,
        statusMessage: `Progress ${i}/${n}`,
        lastUpdatedAt: new Date().toISOString(),
      }));
      s.updateMs.push(performance.now() - started);
    }
  }
}

interface Row {
  size: number;
  createP50: number;
  createP99: number;
  createsPerSecond: number;
  updateP50: number;
}

function row(s: Samples): Row {
  const created = percentiles(s.createMs);
  return {
    size: s.size,
    createP50: created.p50,
    createP99: created.p99,
    createsPerSecond: percentiles(s.burstRates).p50,
    updateP50: percentiles(s.updateMs).p50,
  };
}

function percentiles(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
  return { p50: at(50), p99: at(99) };
}

function report(name: string, rows: Row[]): string[] {
  const base = rows[0]!;
  const ms = (v: number) => v.toFixed(3).padStart(9);
  const x = (v: number) => `(${v.toFixed(2)}x)`.padStart(9);
  const lines = [
    `${name}`,
    `${"tasks".padStart(7)}${"create p50".padStart(20)}${"create p99".padStart(20)}${"creates/s".padStart(20)}${"update p50".padStart(20)}`,
  ];
  for (const row of rows) {
    lines.push(
      `${String(row.size).padStart(7)}` +
        `${ms(row.createP50)} ms${x(row.createP50 / base.createP50)}` +
        `${ms(row.createP99)} ms${x(row.createP99 / base.createP99)}` +
        `${row.createsPerSecond.toFixed(0).padStart(11)}${x(row.createsPerSecond / base.createsPerSecond)}` +
        `${ms(row.updateP50)} ms${x(row.updateP50 / base.updateP50)}`,
    );
  }
  return lines;
}

/** p50 of listing one page of 50 of LIST_OWNER's 60 tasks, in a store of `size` records. */
async function listingP50(target: Backend, size: number): Promise<number> {
  const store = await target.open(`list-${size}`);
  try {
    const every = Math.floor(size / 60);
    const records = Array.from({ length: size }, (_, i) => ({ ...newRecord(), ...(i % every === 0 ? { ownerHash: LIST_OWNER } : {}) }));
    await pool(records, FILL_CONCURRENCY, (record) => store.create(record));
    const ms: number[] = [];
    for (let i = 0; i < LIST_N + 5; i++) {
      const started = performance.now();
      const page = await store.listByOwner(LIST_OWNER, { limit: 50 });
      if (i >= 5) ms.push(performance.now() - started); // the first few warm up
      if (page.records.length !== 50) throw new Error(`listing found ${page.records.length} of 50`);
    }
    return percentiles(ms).p50;
  } finally {
    await store.close();
  }
}

const out = [
  `taskgate store bench — node ${process.version}; per size and case ${N} sequential operations ` +
    `(creates/s: ${BURSTS} bursts per round of >= ${MIN_BURST} creates, ${RATE_CONCURRENCY} in flight; median of ${ROUNDS} rounds), ` +
    `interleaved across the sizes after a warm-up; ratios to the ${SIZES[0]}-task row`,
  "",
];
for (const name of BACKENDS) {
  const target = await backend(name);
  const all: Samples[] = [];
  let burstSize = MIN_BURST;
  try {
    const warmup = await target.open("warmup");
    const warm: Samples = { size: 0, store: warmup, unfinished: await fill(warmup, 100), createMs: [], updateMs: [], burstRates: [] };
    for (let round = 0; round < 2; round++) await measureRound([warm], N, MIN_BURST); // the second runs warm
    burstSize = Math.max(MIN_BURST, Math.round(warm.burstRates[1]! * BURST_TARGET_S));
    await warmup.close();
    for (const size of SIZES) {
      const store = await target.open(`size-${size}`);
      all.push({ size, store, unfinished: await fill(store, size), createMs: [], updateMs: [], burstRates: [] });
    }
    for (let round = 0; round < ROUNDS; round++) await measureRound(all, Math.ceil(N / ROUNDS), burstSize);
  } finally {
    await Promise.all(all.map((s) => s.store.close()));
  }
  out.push(...report(`${name} (bursts of ${burstSize})`, all.map(row)));
  try {
    const listed: number[] = [];
    for (const size of LIST_SIZES) listed.push(await listingP50(target, size));
    const [small, big] = [listed[0]!, listed[listed.length - 1]!];
    out.push(
      `  listing 50 of one owner's tasks: ${LIST_SIZES.map((size, i) => `${listed[i]!.toFixed(3)} ms among ${size}`).join(", ")}` +
        ` (ratio ${(big / small).toFixed(2)}x)`,
      "",
    );
  } finally {
    await target.cleanup();
  }
  process.stderr.write(`bench/store: ${name} done\n`);
}
process.stdout.write(out.join("\n"));
process.exit(0);
