// createTaskStore: builds the TaskStore for a backend. "memory": a keyv Map (lost on exit, expired records
// swept every minute). "file": keyv-file, every write durably on disk before it resolves; one process per file.
// "redis": shared by instances on one url+prefix; each instance writes only its own records and index, and
// start fails at once (naming store.url) if Redis cannot be reached.

import { randomUUID } from "node:crypto";
import { mkdir, open, readFile, rename } from "node:fs/promises";
import path from "node:path";
import KeyvRedis from "@keyv/redis";
import { closeRedis, connectRedis, describeRedisUrl, type RedisConnection } from "../../cluster/redisConnection.js";
import { Keyv } from "keyv";
import { KeyvFile } from "keyv-file";
import type { TaskStore } from "../taskStore.js";
import { KeyvTaskStore } from "./keyvTaskStore.js";

export type TaskStoreOptions =
  | { kind: "memory"; sweepIntervalMs?: number }
  | { kind: "file"; path: string }
  | {
      kind: "redis";
      /** redis:// or rediss:// URL (config store.url). */
      url: string;
      /** Key prefix shared by the instances that share tasks (config store.prefix). */
      prefix: string;
      /** This instance; names its own unfinished-task index. */
      instanceId: string;
      /** Told about connection problems after start (operations also reject); default: ignored. */
      onError?: (error: Error) => void;
    };

const NAMESPACE = "taskgate";
/** How often the memory backend drops expired records nobody reads any more. */
const MEMORY_SWEEP_MS = 60_000;
/** Redis: a command not sent within this long (e.g. queued while reconnecting) rejects instead of hanging. */
const REDIS_COMMAND_TIMEOUT_MS = 10_000;

/**
 * keyv's Map store only drops an expired entry when it is read; finished tasks nobody polls again
 * would stay for the life of the process. Entries are keyv's serialized `{value, expires}`.
 */
export function sweepExpired(map: Map<string, unknown>, now = Date.now()): number {
  let dropped = 0;
  for (const [key, raw] of map) {
    let expires: unknown;
    try {
      expires = (typeof raw === "string" ? (JSON.parse(raw) as { expires?: unknown }) : (raw as { expires?: unknown }))?.expires;
    } catch {
      continue;
    }
    if (typeof expires === "number" && expires <= now) {
      map.delete(key);
      dropped++;
    }
  }
  return dropped;
}

export async function createTaskStore(opts: TaskStoreOptions): Promise<TaskStore> {
  if (opts.kind === "memory") {
    const map = new Map<string, unknown>();
    const sweeper = setInterval(() => sweepExpired(map), opts.sweepIntervalMs ?? MEMORY_SWEEP_MS).unref();
    const keyv = new Keyv({ store: map, namespace: NAMESPACE, throwOnErrors: true });
    return new KeyvTaskStore(keyv, { onClose: async () => clearInterval(sweeper) });
  }
  if (opts.kind === "redis") return openRedisStore(opts);
  const filename = path.resolve(opts.path);
  await mkdir(path.dirname(filename), { recursive: true });
  await assertLoadable(filename);
  const file = new KeyvFile({
    filename,
    writeDelay: 0, // ignored once patched below; set so an unpatched instance would not batch for 100ms
    expiredCheckDelay: 10 * 60_000, // sweep expired records (on the next write) every 10 min, not daily
  });
  const flush = makeWritesDurable(file, filename);
  // throwOnErrors: without it keyv swallows a failed disk write (emits "error", set() resolves false).
  const keyv = new Keyv(file, { namespace: NAMESPACE, throwOnErrors: true });
  return new KeyvTaskStore(keyv, { onClose: flush });
}

/**
 * Keys in Redis: "<prefix>:task:<id>" (keyv's JSON envelope {value, expires}, with a PX expiry when the
 * task has a ttl) and "<prefix>:index:unfinished:<instanceId>" (JSON array, no expiry).
 */
async function openRedisStore(opts: Extract<TaskStoreOptions, { kind: "redis" }>): Promise<TaskStore> {
  if (opts.instanceId === "" || opts.prefix === "") {
    throw new TypeError("redis task store needs a non-empty prefix and instanceId");
  }
  let client: RedisConnection;
  try {
    client = await connectRedis({
      url: opts.url,
      commandTimeoutMs: REDIS_COMMAND_TIMEOUT_MS,
      ...(opts.onError ? { onError: opts.onError } : {}),
    });
  } catch (error) {
    throw new Error(`task store (store.url ${describeRedisUrl(opts.url)}): ${(error as Error).message}`, { cause: error });
  }
  // Both throwOnErrors: KeyvRedis otherwise turns a failed command into "not found" (undefined).
  // useKeyPrefix false: KeyvRedis alone applies the namespace ("<prefix>:"), not keyv a second time.
  const adapter = new KeyvRedis(client, { keyPrefixSeparator: ":", throwOnErrors: true });
  const keyv = new Keyv(adapter, { namespace: opts.prefix, useKeyPrefix: false, throwOnErrors: true });
  return new KeyvTaskStore(keyv, {
    indexKey: `index:unfinished:${opts.instanceId}`,
    // close() has waited for in-flight operations first.
    onClose: () => closeRedis(client),
  });
}

/**
 * keyv-file loads its file synchronously in the constructor and, if parsing fails, logs and starts
 * EMPTY, then overwrites the file on the next write. Refuse to start instead of silently losing tasks.
 */
async function assertLoadable(filename: string): Promise<void> {
  let text: string;
  try {
    text = await readFile(filename, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  try {
    JSON.parse(text);
  } catch (error) {
    throw new Error(`task store file ${filename} is not valid JSON; refusing to start with an empty store`, {
      cause: error,
    });
  }
}

/** The keyv-file 5.3.x internals this module relies on (checked at runtime below). */
interface KeyvFileInternals {
  _data: Map<string, unknown>;
  _lastExpire: number;
  opts: { serialize: (value: unknown) => string | Buffer };
  save: () => Promise<void>;
  saveToDisk: () => Promise<void>;
}

/**
 * keyv-file's own save() is not durable on resolve: while a disk write is in flight, a new set()
 * is handed the in-flight write's promise, whose snapshot predates that set(); the set() resolves
 * but its data is not on disk. Its saveToDisk() also rewrites the file in place (a kill mid-write
 * leaves a truncated file). Replace both on this instance: save() resolves only after a write whose
 * snapshot was taken after the call; writes go to a temp file, are fsynced, then renamed over.
 * Returns a flush function (resolves once memory and file agree).
 */
function makeWritesDurable(file: KeyvFile, filename: string): () => Promise<void> {
  const internals = file as unknown as KeyvFileInternals;
  if (
    !(internals._data instanceof Map) ||
    typeof internals.save !== "function" ||
    typeof internals.saveToDisk !== "function" ||
    typeof internals.opts?.serialize !== "function"
  ) {
    throw new Error("keyv-file internals changed (expected 5.3.x); cannot guarantee durable task writes");
  }

  // Unique per instance, so two instances on one file (not supported, but e.g. in tests) cannot
  // rename each other's half-written temp file. A kill mid-write can leave one behind; it is garbage.
  const tmpname = `${filename}.tmp-${randomUUID().slice(0, 8)}`;
  const writeSnapshot = async (): Promise<void> => {
    // Snapshot synchronously, before the first await, so it includes every set() made so far.
    const data = internals.opts.serialize({ cache: [...internals._data], lastExpire: internals._lastExpire });
    const handle = await open(tmpname, "w");
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmpname, filename);
  };

  let queued: Promise<void> | undefined; // a write that has not taken its snapshot yet
  let last: Promise<void> = Promise.resolve(); // the most recently scheduled write
  internals.saveToDisk = writeSnapshot;
  internals.save = () => {
    if (queued !== undefined) return queued; // its snapshot will include the caller's change
    const write = last
      .catch(() => undefined)
      .then(() => {
        queued = undefined;
        return writeSnapshot();
      });
    queued = write;
    last = write;
    return write;
  };
  return () => internals.save();
}
