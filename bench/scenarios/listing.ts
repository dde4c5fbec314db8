// listing: what listing one page of 50 of a user's tasks costs among 1,000 tasks in the store and
// among 100,000 (BENCH_LISTING_SIZES), printed as a ratio (~1.0x: the cost follows the page, not
// the store). Per backend (BENCH_LISTING_BACKENDS, default memory,redis): a store per size filled
// with that many records, one owner's 60 spread through them; p50 of BENCH_LISTING_N listByOwner
// pages, the sizes measured in turns. On redis also end to end: GET /tasks?limit=50 as that owner, answered by a taskgate on
// the filled store (started in this process; its upstream is a closed port: listing needs none).

import { createHash, randomBytes } from "node:crypto";
import { createClient } from "@redis/client";
import { ConfigSchema } from "../../src/config/schema.js";
import { type Gateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/observability/logger.js";
import { createTaskStore } from "../../src/tasks/stores/createTaskStore.js";
import type { TaskRecord } from "../../src/tasks/taskRecord.js";
import type { TaskStore } from "../../src/tasks/taskStore.js";
import { onCleanup } from "../lib/cleanup.js";
import { positiveInt, positiveIntList, redisUrl } from "../lib/knobs.js";
import { setPhase } from "../lib/watchdog.js";
import { out, type Scenario } from "./scenario.js";

const OWNER_SUBJECT = "bench-alice";
const OWNER = createHash("sha256").update(`subject:${OWNER_SUBJECT}`).digest("hex");
const OWNED = 60;
const FILL_CONCURRENCY = 64;

function record(owner: string, at: number): TaskRecord {
  const created = new Date(at).toISOString();
  return {
    taskId: randomBytes(20).toString("base64url"),
    status: "completed",
    createdAt: created,
    lastUpdatedAt: created,
    ttlMs: 3_600_000,
    ownerHash: owner,
    tool: "slow_echo",
    holder: "bench-instance",
    version: 0,
  };
}

async function fill(store: TaskStore, size: number): Promise<void> {
  const every = Math.floor(size / OWNED);
  const start = Date.now() - size;
  let next = 0;
  const worker = async () => {
    while (next < size) {
      const i = next++;
      await store.create(record(i % every === 0 ? OWNER : randomBytes(32).toString("hex"), start + i));
    }
  };
  await Promise.all(Array.from({ length: FILL_CONCURRENCY }, worker));
}

const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

/** p50 of each way of listing, measured in turns (one page of each, then the next), so machine noise hits all alike. */
async function interleaved(n: number, ways: Array<() => Promise<number>>): Promise<number[]> {
  const ms = ways.map(() => [] as number[]);
  for (let i = 0; i < n + 5; i++) {
    for (const [index, once] of ways.entries()) {
      const started = performance.now();
      const found = await once();
      if (i >= 5) ms[index]?.push(performance.now() - started); // the first few warm up
      if (found !== 50) throw new Error(`a page held ${found} of 50 records`);
    }
  }
  return ms.map(p50);
}

async function openStore(kind: "memory" | "redis", prefix: string): Promise<TaskStore> {
  if (kind === "memory") return createTaskStore({ kind: "memory" });
  return createTaskStore({
    kind: "redis",
    connect: async () => {
      const client = createClient({ url: redisUrl() });
      await client.connect();
      return client;
    },
    label: redisUrl(),
    prefix,
    instanceId: "bench-instance",
  });
}

async function gatewayOn(prefix: string): Promise<Gateway> {
  const config = ConfigSchema.parse({
    port: 0,
    auth: { mode: "demo" },
    upstream: { url: "http://127.0.0.1:9/mcp" },
    store: { kind: "redis", url: redisUrl(), prefix },
  });
  return startGateway(config, { log: createLogger("silent") });
}

const viaHttp = (gateway: Gateway) => async () => {
  const response = await fetch(`${new URL(gateway.url).origin}/tasks?limit=50`, { headers: { Authorization: `Bearer ${OWNER_SUBJECT}` } });
  return ((await response.json()) as { tasks: unknown[] }).tasks.length;
};

async function measure(kind: "memory" | "redis", sizes: number[], n: number): Promise<void> {
  const stores: TaskStore[] = [];
  const gateways: Gateway[] = [];
  try {
    const prefixes: string[] = [];
    for (const size of sizes) {
      const prefix = `taskgate-bench-listing-${randomBytes(6).toString("hex")}`;
      if (kind === "redis") onCleanup(`redis keys ${prefix}`, () => dropPrefix(prefix));
      setPhase(`filling the ${kind} store with ${size} tasks`);
      const store = await openStore(kind, prefix);
      stores.push(store);
      await fill(store, size);
      prefixes.push(prefix);
    }
    setPhase(`listing (${kind})`);
    const direct = await interleaved(
      n,
      stores.map((store) => async () => (await store.listByOwner(OWNER, { limit: 50 })).records.length),
    );
    report(`${kind} listByOwner`, sizes, direct);
    if (kind !== "redis") return;
    for (const prefix of prefixes) gateways.push(await gatewayOn(prefix));
    report(`${kind} GET /tasks`, sizes, await interleaved(n, gateways.map(viaHttp)));
  } finally {
    for (const gateway of gateways) await gateway.close();
    for (const store of stores) await store.close();
  }
}

export function listingScenario(): Scenario {
  const sizes = positiveIntList("BENCH_LISTING_SIZES", [1_000, 100_000]);
  const n = positiveInt("BENCH_LISTING_N", 100);
  const backends = (process.env.BENCH_LISTING_BACKENDS ?? "memory,redis")
    .split(",")
    .filter((b): b is "memory" | "redis" => ["memory", "redis"].includes(b));
  return {
    name: "listing",
    title: "one page of 50 of a user's tasks among few vs many tasks in the store (the ratio should stay ~1.0x)",
    sizes: () => `${backends.join(", ")}: ${sizes.join(" vs ")} tasks, p50 of ${n} pages each, in turns`,
    budgetMs: () => 600_000,
    async run() {
      for (const kind of backends) await measure(kind, sizes, n);
    },
  };
}

function report(what: string, sizes: number[], ms: number[]): void {
  const figures = sizes.map((size, i) => `${(ms[i] as number).toFixed(3)} ms among ${size.toLocaleString("en")}`).join(", ");
  const ratio = (ms[ms.length - 1] as number) / (ms[0] as number);
  out(`  ${what.padEnd(22)} ${figures}: ratio ${ratio.toFixed(2)}x`);
}

async function dropPrefix(prefix: string): Promise<void> {
  const client = createClient({ url: redisUrl() });
  await client.connect();
  try {
    const keys: string[] = [];
    for await (const batch of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 1000 })) keys.push(...batch);
    for (let i = 0; i < keys.length; i += 1000) await client.del(keys.slice(i, i + 1000));
  } finally {
    await client.quit();
  }
}
