// The child side of a bench process: starts one server (the role), announces it with a "ready"
// message on the IPC channel, then answers the parent's questions. Every role answers
//   cpu  → process.cpuUsage() of THIS process (µs; all threads: JS, GC helpers, libuv pool)
//   mem  → process.memoryUsage() after a forced GC when run with --expose-gc (two passes, after
//          every page of the young generation was touched), read once RSS has stopped falling (V8
//          returns the freed pages a moment after the GC), and the young generation's committed
//          size (V8 grows it in a burst, shrinks it when idle; decisions/0042)
//   lag  → the event loop's longest and p99 delay (ms) since the last "lag", then resets
//          (a loop stalled longer than the HTTP keep-alive timeout resets its clients' sockets)
//   phases → per-call phase samples since the last ask, with lib/phases.ts preloaded (else null)
//   stop → closes the server, answers, exits
// plus whatever handlers the role adds. When the parent goes away (IPC disconnect) the child
// exits at once, so no bench process outlives its run.

import { monitorEventLoopDelay } from "node:perf_hooks";
import { getHeapSpaceStatistics } from "node:v8";

export type Handlers = Record<string, (args: unknown) => unknown>;

export interface Role {
  /** Sent with "ready": the url, port and whatever the parent needs to know. */
  info: Record<string, unknown>;
  handlers?: Handlers;
  close(): Promise<void>;
}

type Ask = { kind: "ask"; id: number; what: string; args?: unknown };

export async function serveRole(name: string, start: () => Promise<Role>): Promise<void> {
  if (!process.send) throw new Error(`${name}: run me through bench/lib/children.ts (no IPC channel)`);
  process.on("disconnect", () => process.exit(0));
  let role: Role;
  try {
    role = await start();
  } catch (error) {
    process.stderr.write(`${name}: could not start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(2);
  }
  const gc = (globalThis as { gc?: () => void }).gc;
  const loop = monitorEventLoopDelay({ resolution: 20 });
  loop.enable();
  const builtIn: Handlers = {
    cpu: () => process.cpuUsage(),
    mem: async () => {
      if (gc) {
        touchYoungGeneration();
        gc();
        gc();
        await rssSettled();
      }
      return { ...process.memoryUsage(), youngGeneration: youngGenerationBytes(), afterGc: gc !== undefined };
    },
    lag: () => {
      const lag = { maxMs: loop.max / 1e6, p99Ms: loop.percentile(99) / 1e6 };
      loop.reset();
      return lag;
    },
    /** Per-call phase samples since the last ask, when lib/phases.ts is preloaded (BENCH_PHASES); else null. */
    phases: () => (globalThis as { __benchPhases?: { take(): unknown } }).__benchPhases?.take() ?? null,
    stop: async () => {
      await role.close();
      setImmediate(() => process.exit(0));
      return true;
    },
  };
  const handlers = { ...builtIn, ...role.handlers };
  process.on("message", (message: Ask) => {
    if (message?.kind !== "ask") return;
    const handler = handlers[message.what];
    const reply = (body: { value?: unknown; error?: string }) => process.send?.({ kind: "answer", id: message.id, ...body });
    if (!handler) return reply({ error: `${name} has no handler for '${message.what}'` });
    Promise.resolve()
      .then(() => handler(message.args))
      .then(
        (value) => reply({ value: value ?? null }),
        (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
      );
  });
  process.send({ kind: "ready", info: { ...role.info, pid: process.pid } });
}

/** RSS must fall less than this … */
const RSS_STILL_BYTES = 1_048_576;
/** … for this long after a forced GC before it counts as settled … */
const RSS_STILL_MS = 250;
/** … or at most this long. */
const RSS_SETTLE_MAX_MS = 3_000;

/**
 * Waits until RSS stops falling after a forced GC. V8 gives the pages a full GC freed back to the OS
 * on background threads, tens of ms after gc() returns: taskgate after cancelling 10k tasks read
 * 355 MiB at gc()'s return, 309 MiB 10 ms later and 181 MiB from 50 ms on; the floor fell 28 MiB in
 * 10 ms. Read at once, RSS counted memory already given back, more the more heap the GC freed.
 */
async function rssSettled(): Promise<void> {
  const start = performance.now();
  let low = process.memoryUsage.rss();
  let lowAt = start;
  while (performance.now() - lowAt < RSS_STILL_MS && performance.now() - start < RSS_SETTLE_MAX_MS) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    const rss = process.memoryUsage.rss();
    if (rss < low - RSS_STILL_BYTES) {
      low = rss;
      lowAt = performance.now();
    }
  }
}

/** The arguments the parent passed to this role (SpawnOptions.args). */
export function roleArgs<T>(): T {
  return JSON.parse(process.env.BENCH_ROLE_ARGS ?? "{}") as T;
}

/**
 * Allocates and drops twice the young generation's committed size in small arrays, so every page V8
 * has committed to it is resident when memory is read: "RSS kept" is read less the change in that
 * committed size, which is only right when committed means resident. Without it, a young generation
 * just grown and half used counted its untouched pages as kept memory when V8 later shrank it.
 */
function touchYoungGeneration(): void {
  const chunks = Math.ceil((2 * youngGenerationBytes()) / TOUCH_CHUNK_BYTES);
  // The arrays do happen: --trace-gc shows the scavenges they cause, and the RSS read after them grew.
  for (let i = 0; i < chunks; i++) new Array<number>(TOUCH_CHUNK_BYTES / 8).fill(i);
}

/** Each array of the young generation's touch: well under V8's large-object size, so it is allocated in new space. */
const TOUCH_CHUNK_BYTES = 16_384;

/** Bytes V8 has committed to its young generation (new space, and new large objects). */
function youngGenerationBytes(): number {
  let bytes = 0;
  for (const space of getHeapSpaceStatistics()) if (space.space_name.startsWith("new_")) bytes += space.space_size;
  return bytes;
}
