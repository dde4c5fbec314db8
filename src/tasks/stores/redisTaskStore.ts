// RedisTaskStore: the store shared by the instances on one Redis url + prefix (store.kind "redis").
// It opens its connection through the factory its caller gives it (it does not know how the cluster
// connects) and closes it on close().
//
// Keys: "<prefix>:task:<id>" holds the record's JSON (one JSON.parse per read), with a PX expiry
// at createdAt + ttlMs when the task has a ttl; "<prefix>:index:unfinished:<instanceId>" is a SET of
// the unfinished tasks this instance created (SADD/SREM, so listUnfinished is O(unfinished)).
// A create is one Lua script (SET NX + SADD, atomic: no record without its index entry, and exactly
// one of two instances creating one id wins). An update reads the record, runs mutate, and writes
// with a Lua compare-and-set that applies only if the record is still the text it read, changing the
// index in the same step; if another instance wrote in between, mutate runs again on the new record
// (up to maxUpdateAttempts, then the update rejects naming the task). Updates on one instance are
// queued per task, so they never race each other.
//
// Every command has a limit (commandTimeoutMs): one Redis does not answer in time rejects with
// "task store (redis <label>) did not answer within N ms" (the command may still be carried out).
// Reads also accept a record in taskgate 0.1's keyv envelope ({"value": "<record JSON>"}).

import { createHash } from "node:crypto";
import type { RedisClientType } from "@redis/client";
import type { TaskRecord } from "../taskRecord.js";
import type { TaskPage, TaskStore } from "../taskStore.js";
import { OperationGate } from "./operationGate.js";
import { assertStorable, deadlineOf, isExpired, isUnfinished, type Mutate, nextRecord } from "./storedRecord.js";
import { limit } from "./timeLimit.js";

export type RedisClient = RedisClientType;

export interface RedisTaskStoreOptions {
  /** Opens the connection this store uses (and closes on close()). */
  connect: () => Promise<RedisClient>;
  /** How errors name this Redis, e.g. its url with any password hidden. */
  label: string;
  /** Key prefix shared by the instances that share tasks (config store.prefix). */
  prefix: string;
  /** This instance; names its own unfinished-task index. */
  instanceId: string;
  /** A command Redis has not answered within this long rejects (default 5 s; config store.commandTimeoutMs, which the error names). */
  commandTimeoutMs?: number;
  /** Tries of an update whose record another instance keeps changing (default 10). */
  maxUpdateAttempts?: number;
}

/**
 * Both scripts first check that the index key is a SET (or absent): Redis does not roll a script
 * back when a command in it fails, so a failing SADD after the SET would leave a half-done write.
 * With that checked, nothing after it can fail on bad data, and each script writes all or nothing.
 */
const CHECK_INDEX = `
local indexType = redis.call('TYPE', KEYS[2]).ok
if indexType ~= 'set' and indexType ~= 'none' then
  return redis.error_reply('WRONGTYPE the unfinished-task index ' .. KEYS[2] .. ' is a ' .. indexType .. ', not a set')
end`;

/** KEYS: task, index. ARGV: json, px ("0" = no expiry), "1" if unfinished, taskId. 1 = created, 0 = exists. */
const CREATE = `${CHECK_INDEX}
local created
if ARGV[2] == '0' then created = redis.call('SET', KEYS[1], ARGV[1], 'NX')
else created = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) end
if not created then return 0 end
if ARGV[3] == '1' then redis.call('SADD', KEYS[2], ARGV[4]) end
return 1`;

/** KEYS: task, index. ARGV: expected json, new json, px, index change ("add" | "remove" | ""), taskId. 1 = written, 0 = changed meanwhile. */
const UPDATE = `${CHECK_INDEX}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[3] == '0' then redis.call('SET', KEYS[1], ARGV[2])
else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
if ARGV[4] == 'add' then redis.call('SADD', KEYS[2], ARGV[5])
elseif ARGV[4] == 'remove' then redis.call('SREM', KEYS[2], ARGV[5]) end
return 1`;

const MGET_CHUNK = 500;

interface Script {
  source: string;
  sha: string;
}

const script = (source: string): Script => ({ source, sha: createHash("sha1").update(source).digest("hex") });
const SCRIPTS = { create: script(CREATE), update: script(UPDATE) };

export async function openRedisTaskStore(options: RedisTaskStoreOptions): Promise<TaskStore> {
  if (options.instanceId === "" || options.prefix === "") {
    throw new TypeError("redis task store needs a non-empty prefix and instanceId");
  }
  const name = `task store (redis ${options.label})`;
  let client: RedisClient;
  try {
    client = await options.connect();
  } catch (error) {
    throw new Error(`${name}: ${(error as Error).message}`, { cause: error });
  }
  return new RedisTaskStore(name, client, options);
}

/** Per-task queue: run() calls for one id execute one after another, in call order. */
class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const result = (this.tails.get(key) ?? Promise.resolve()).then(work);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}

class RedisTaskStore implements TaskStore {
  private readonly gate: OperationGate;
  private readonly queue = new KeyedQueue();
  private readonly indexKey: string;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;

  constructor(
    private readonly name: string,
    private readonly client: RedisClient,
    private readonly options: RedisTaskStoreOptions,
  ) {
    this.gate = new OperationGate(name);
    this.indexKey = `${options.prefix}:index:unfinished:${options.instanceId}`;
    this.timeoutMs = options.commandTimeoutMs ?? 5_000;
    this.maxAttempts = options.maxUpdateAttempts ?? 10;
  }

  create(record: TaskRecord): Promise<void> {
    return this.gate.run(async () => {
      assertStorable(record);
      const json = JSON.stringify(record);
      const args = [json, expiryArg(record), isUnfinished(record) ? "1" : "0", record.taskId];
      const created = await this.script(SCRIPTS.create, [this.taskKey(record.taskId), this.indexKey], args);
      if (created !== 1) throw new Error(`task ${record.taskId} already exists`);
    });
  }

  get(taskId: string): Promise<TaskRecord | undefined> {
    return this.gate.run(async () => {
      const raw = await this.command(() => this.client.get(this.taskKey(taskId)));
      return raw === null ? undefined : live(raw, Date.now());
    });
  }

  update(taskId: string, mutate: Mutate): Promise<TaskRecord | undefined> {
    return this.gate.run(() =>
      this.queue.run(taskId, async () => {
        const key = this.taskKey(taskId);
        for (let attempt = 1; ; attempt++) {
          const raw = await this.command(() => this.client.get(key));
          const current = raw === null ? undefined : live(raw, Date.now());
          if (raw === null || current === undefined) return undefined;
          const wasOpen = isUnfinished(current);
          const next = nextRecord(current, mutate);
          if (next === undefined) return live(raw, Date.now()); // a fresh copy: mutate may have edited its own
          const isOpen = isUnfinished(next);
          const indexChange = isOpen === wasOpen ? "" : isOpen ? "add" : "remove";
          const args = [raw, JSON.stringify(next), expiryArg(next), indexChange, taskId];
          if ((await this.script(SCRIPTS.update, [key, this.indexKey], args)) === 1) return next;
          if (attempt >= this.maxAttempts) {
            throw new Error(
              `${this.name}: task ${taskId} was changed by another writer during each of ${attempt} attempts to update it; this update was not written`,
            );
          }
        }
      }),
    );
  }

  listUnfinished(): Promise<TaskRecord[]> {
    return this.gate.run(async () => {
      const ids = await this.command(() => this.client.sMembers(this.indexKey));
      const open: TaskRecord[] = [];
      const stale: string[] = [];
      const now = Date.now();
      for (let start = 0; start < ids.length; start += MGET_CHUNK) {
        const chunk = ids.slice(start, start + MGET_CHUNK);
        const raws = await this.command(() => this.client.mGet(chunk.map((id) => this.taskKey(id))));
        raws.forEach((raw, i) => {
          const record = raw === null ? undefined : live(raw, now);
          if (record !== undefined && isUnfinished(record)) open.push(record);
          else stale.push(chunk[i]!);
        });
      }
      // Gone (expired) or finished by another instance: drop from this instance's index.
      if (stale.length > 0) await this.command(() => this.client.sRem(this.indexKey, stale));
      return open;
    });
  }

  // Listing on Redis comes with its index (next change); until then it says so.
  listByOwner(): Promise<TaskPage> {
    return Promise.reject(new Error(`${this.name}: task listing is not available on redis yet`));
  }

  listAll(): Promise<TaskPage> {
    return this.listByOwner();
  }

  /** Waits for operations already started (each bounded by the timeout), then closes the connection. */
  close(): Promise<void> {
    return this.gate.close(async () => {
      if (!this.client.isOpen) return;
      try {
        await limit(this.client.close(), this.timeoutMs, () => `${this.name} did not close within ${this.timeoutMs} ms`);
      } catch {
        if (this.client.isOpen) this.client.destroy();
      }
    });
  }

  private taskKey(taskId: string): string {
    return `${this.options.prefix}:task:${taskId}`;
  }

  /** Runs a Redis command with the store's time limit; errors name the store. */
  private command<T>(send: () => Promise<T>): Promise<T> {
    let sent: Promise<T>;
    try {
      sent = send();
    } catch (error) {
      sent = Promise.reject(error);
    }
    const named = sent.catch((error: unknown) => {
      throw new Error(`${this.name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    });
    return limit(
      named,
      this.timeoutMs,
      () => `${this.name} did not answer within ${this.timeoutMs} ms (store.commandTimeoutMs; the command may still be carried out)`,
    );
  }

  /** EVALSHA, falling back to EVAL when Redis does not have the script (first use, or after a restart). */
  private async script(which: Script, keys: string[], args: string[]): Promise<unknown> {
    try {
      return await this.command(() => this.client.evalSha(which.sha, { keys, arguments: args }));
    } catch (error) {
      if (!String((error as Error).message).includes("NOSCRIPT")) throw error;
      return this.command(() => this.client.eval(which.source, { keys, arguments: args }));
    }
  }
}

/** PX for the record's deadline ("0" = none); a record already past it still gets 1 ms, so Redis drops it. */
function expiryArg(record: TaskRecord): string {
  const end = deadlineOf(record);
  return end === undefined ? "0" : String(Math.max(1, end - Date.now()));
}

/** The stored record (unwrapping taskgate 0.1's keyv envelope), or undefined once expired. */
function live(raw: string, now: number): TaskRecord | undefined {
  let record = JSON.parse(raw) as TaskRecord | { value?: unknown; taskId?: undefined };
  if (record.taskId === undefined && typeof (record as { value?: unknown }).value === "string") {
    record = JSON.parse((record as { value: string }).value) as TaskRecord;
  }
  return isExpired(record as TaskRecord, now) ? undefined : (record as TaskRecord);
}
