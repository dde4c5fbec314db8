// RedisTaskStore: the store shared by the instances on one Redis url + prefix (store.kind "redis").
// It opens its connection through the factory its caller gives it (it does not know how the cluster
// connects) and closes it on close().
//
// Keys: "<prefix>:task:<id>" holds the record's JSON (one JSON.parse per read), with a PX expiry
// at createdAt + ttlMs when the task has a ttl; "<prefix>:index:unfinished:<instanceId>" is a SET of
// the unfinished tasks this instance created (SADD/SREM, so listUnfinished is O(unfinished)).
// Listing: "<prefix>:index:list:all" and "<prefix>:index:list:owner:<ownerHash>" are sorted sets of
// taskListing's listKey (score 0, read newest first with ZRANGE BYLEX REV, so a page reads its own
// entries); "<prefix>:index:list:expiry" scores "<ownerHash>\n<listKey>" by deadline, and a sweep
// (every sweepIntervalMs, any instance) removes the entries of expired records from both indexes.
// A create is one Lua script (SET NX + the index entries, atomic: no record without its index
// entries, and exactly one of two instances creating one id wins). An update reads the record, runs
// mutate, and writes with a Lua compare-and-set that applies only if the record is still the text it
// read, changing the indexes in the same step; if another instance wrote in between, mutate runs
// again on the new record (up to maxUpdateAttempts, then the update rejects naming the task). Updates
// on one instance are queued per task, so they never race each other.
//
// Push subscriptions: "<prefix>:push:book:<ownerHash>" holds an owner's book (JSON), and
// "<prefix>:push:owners" is the SET of owners that have one; a change is one compare-and-set script.
//
// Every command has a limit (commandTimeoutMs): one Redis does not answer in time rejects with
// "task store (redis <label>) did not answer within N ms" (the command may still be carried out).
// Reads also accept a record in taskgate 0.1's keyv envelope ({"value": "<record JSON>"}).

import { createHash } from "node:crypto";
import type { RedisClientType } from "@redis/client";
import { limit } from "../../util/timeLimit.js";
import { type BookSlots, PushBooks } from "../pushBook.js";
import type { TaskRecord } from "../taskRecord.js";
import type { TaskListQuery, TaskPage, TaskStore } from "../taskStore.js";
import { KeyedQueue } from "./keyedQueue.js";
import { OperationGate } from "./operationGate.js";
import { assertStorable, compareAndSetUpdate, deadlineOf, isExpired, isUnfinished, type Mutate } from "./storedRecord.js";
import { type ListEntry, type ListPosition, listKey, positionOf, positionOfKey, readPage } from "./taskListing.js";

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
  /** How often the listing entries of expired records are removed (default 60 s). */
  sweepIntervalMs?: number;
  /** A sweep that failed (it runs again at the next interval). Default: ignored. */
  onError?: ((error: Error) => void) | undefined;
}

/**
 * Both scripts first check the index keys' types (absent is fine): Redis does not roll a script back
 * when a command in it fails, so a failing SADD after the SET would leave a half-done write. With
 * that checked, nothing after it can fail on bad data, and each script writes all or nothing.
 * KEYS[2] is the unfinished SET; every later key is a sorted set.
 */
const CHECK_INDEX = `
for i = 2, #KEYS do
  local want = i == 2 and 'set' or 'zset'
  local got = redis.call('TYPE', KEYS[i]).ok
  if got ~= want and got ~= 'none' then
    return redis.error_reply('WRONGTYPE the task index ' .. KEYS[i] .. ' is a ' .. got .. ', not a ' .. want)
  end
end`;

/**
 * KEYS: task, unfinished, list all, list owner, expiry. ARGV: json, px ("0" = no expiry), "1" if
 * unfinished, taskId, list member, expiry member, deadline ("" = none). 1 = created, 0 = exists.
 */
const CREATE = `${CHECK_INDEX}
local created
if ARGV[2] == '0' then created = redis.call('SET', KEYS[1], ARGV[1], 'NX')
else created = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) end
if not created then return 0 end
if ARGV[3] == '1' then redis.call('SADD', KEYS[2], ARGV[4]) end
redis.call('ZADD', KEYS[3], 0, ARGV[5])
redis.call('ZADD', KEYS[4], 0, ARGV[5])
if ARGV[7] ~= '' then redis.call('ZADD', KEYS[5], ARGV[7], ARGV[6]) end
return 1`;

/**
 * KEYS: task, unfinished, list all, old owner's list, new owner's list, expiry. ARGV: expected json,
 * new json, px, unfinished change ("add" | "remove" | ""), taskId, old list member, new list member,
 * old expiry member, new expiry member, new deadline ("" = none). 1 = written, 0 = changed meanwhile.
 */
const UPDATE = `${CHECK_INDEX}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[3] == '0' then redis.call('SET', KEYS[1], ARGV[2])
else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
if ARGV[4] == 'add' then redis.call('SADD', KEYS[2], ARGV[5])
elseif ARGV[4] == 'remove' then redis.call('SREM', KEYS[2], ARGV[5]) end
if ARGV[6] ~= ARGV[7] or KEYS[4] ~= KEYS[5] then
  redis.call('ZREM', KEYS[3], ARGV[6])
  redis.call('ZREM', KEYS[4], ARGV[6])
end
redis.call('ZADD', KEYS[3], 0, ARGV[7])
redis.call('ZADD', KEYS[5], 0, ARGV[7])
if ARGV[8] ~= ARGV[9] then redis.call('ZREM', KEYS[6], ARGV[8]) end
if ARGV[10] ~= '' then redis.call('ZADD', KEYS[6], ARGV[10], ARGV[9])
else redis.call('ZREM', KEYS[6], ARGV[9]) end
return 1`;

/**
 * KEYS: expiry, list all. ARGV: now, max, owner list key prefix. Removes the listing entries of up to
 * max records whose deadline has passed; returns how many.
 */
const SWEEP = `
local due = redis.call('ZRANGE', KEYS[1], '-inf', ARGV[1], 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[2]))
for _, entry in ipairs(due) do
  local cut = string.find(entry, '\\n', 1, true)
  local member = string.sub(entry, cut + 1)
  redis.call('ZREM', KEYS[2], member)
  redis.call('ZREM', ARGV[3] .. string.sub(entry, 1, cut - 1), member)
  redis.call('ZREM', KEYS[1], entry)
end
return #due`;

/**
 * KEYS: book, owners. ARGV: expected book ("" = none), new book ("" = delete), owner, most owners.
 * 1 = written, 0 = changed meanwhile, -1 = a new book past the most owners. The SET is changed
 * first: a failure there (wrong type) leaves the book as it was.
 */
const BOOK = `
local current = redis.call('GET', KEYS[1]) or ''
if current ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('SREM', KEYS[2], ARGV[3])
  redis.call('DEL', KEYS[1])
  return 1
end
if current == '' and redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[4]) then return -1 end
redis.call('SADD', KEYS[2], ARGV[3])
redis.call('SET', KEYS[1], ARGV[2])
return 1`;

const MGET_CHUNK = 500;

interface Script {
  source: string;
  sha: string;
}

const script = (source: string): Script => ({ source, sha: createHash("sha1").update(source).digest("hex") });
const SCRIPTS = { create: script(CREATE), update: script(UPDATE), sweep: script(SWEEP), book: script(BOOK) };
const SWEEP_CHUNK = 1_000;

/** Where a record sits in the listing indexes. */
interface Listed {
  member: string;
  expiryMember: string;
  /** Deadline in epoch ms as text, "" = none. */
  deadline: string;
}

function listedOf(record: TaskRecord): Listed {
  const member = listKey(positionOf(record));
  const end = deadlineOf(record);
  return { member, expiryMember: `${record.ownerHash}\n${member}`, deadline: end === undefined ? "" : String(end) };
}

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

class RedisTaskStore implements TaskStore {
  private readonly gate: OperationGate;
  private readonly queue = new KeyedQueue();
  private readonly indexKey: string;
  private readonly listAllKey: string;
  private readonly expiryKey: string;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly sweeper: NodeJS.Timeout;
  readonly push: PushBooks;

  constructor(
    private readonly name: string,
    private readonly client: RedisClient,
    private readonly options: RedisTaskStoreOptions,
  ) {
    this.gate = new OperationGate(name);
    this.push = new PushBooks(name, this.bookSlots(), (operation) => this.gate.run(operation));
    this.indexKey = `${options.prefix}:index:unfinished:${options.instanceId}`;
    this.listAllKey = `${options.prefix}:index:list:all`;
    this.expiryKey = `${options.prefix}:index:list:expiry`;
    this.timeoutMs = options.commandTimeoutMs ?? 5_000;
    this.maxAttempts = options.maxUpdateAttempts ?? 10;
    const onError = options.onError ?? (() => undefined);
    this.sweeper = setInterval(() => {
      this.sweep().catch((error: unknown) => onError(new Error(`${name}: sweeping expired listing entries failed`, { cause: error })));
    }, options.sweepIntervalMs ?? 60_000).unref();
  }

  create(record: TaskRecord): Promise<void> {
    return this.gate.run(async () => {
      assertStorable(record);
      const json = JSON.stringify(record);
      const listed = listedOf(record);
      const args = [
        json,
        expiryArg(record),
        isUnfinished(record) ? "1" : "0",
        record.taskId,
        listed.member,
        listed.expiryMember,
        listed.deadline,
      ];
      const keys = [this.taskKey(record.taskId), this.indexKey, this.listAllKey, this.ownerKey(record.ownerHash), this.expiryKey];
      const created = await this.script(SCRIPTS.create, keys, args);
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
        return compareAndSetUpdate<string>({
          store: this.name,
          taskId,
          mutate,
          maxAttempts: this.maxAttempts,
          read: async () => {
            const raw = await this.command(() => this.client.get(key));
            const record = raw === null ? undefined : live(raw, Date.now());
            return raw === null || record === undefined ? undefined : { record, seen: raw };
          },
          write: async (raw, current, next) => {
            const wasOpen = isUnfinished(current);
            const isOpen = isUnfinished(next);
            const indexChange = isOpen === wasOpen ? "" : isOpen ? "add" : "remove";
            const [was, now] = [listedOf(current), listedOf(next)];
            const args = [raw, JSON.stringify(next), expiryArg(next), indexChange, taskId, was.member, now.member];
            args.push(was.expiryMember, now.expiryMember, now.deadline);
            const keys = [
              key,
              this.indexKey,
              this.listAllKey,
              this.ownerKey(current.ownerHash),
              this.ownerKey(next.ownerHash),
              this.expiryKey,
            ];
            return (await this.script(SCRIPTS.update, keys, args)) === 1;
          },
        });
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

  listByOwner(ownerHash: string, query: TaskListQuery): Promise<TaskPage> {
    return this.gate.run(() => readPage(query, (below, count) => this.listBelow(this.ownerKey(ownerHash), ownerHash, below, count)));
  }

  listAll(query: TaskListQuery): Promise<TaskPage> {
    return this.gate.run(() => readPage(query, (below, count) => this.listBelow(this.listAllKey, undefined, below, count)));
  }

  /** Removes the listing entries of expired records, SWEEP_CHUNK per script run, until none is due. */
  sweep(): Promise<number> {
    return this.gate.run(async () => {
      let total = 0;
      for (;;) {
        const args = [String(Date.now()), String(SWEEP_CHUNK), this.ownerKey("")];
        const dropped = Number(await this.script(SCRIPTS.sweep, [this.expiryKey, this.listAllKey], args));
        total += dropped;
        if (dropped < SWEEP_CHUNK) return total;
      }
    });
  }

  /** Waits for operations already started (each bounded by the timeout), then closes the connection. */
  close(): Promise<void> {
    clearInterval(this.sweeper);
    return this.gate.close(async () => {
      if (!this.client.isOpen) return destroyQuietly(this.client); // one being started afresh must not be reopened
      try {
        await limit(this.client.close(), this.timeoutMs, () => `${this.name} did not close within ${this.timeoutMs} ms`);
      } catch {
        if (this.client.isOpen) this.client.destroy();
      }
    });
  }

  private bookSlots(): BookSlots {
    const bookKey = (owner: string) => `${this.options.prefix}:push:book:${owner}`;
    const ownersKey = `${this.options.prefix}:push:owners`;
    return {
      read: async (owner) => (await this.command(() => this.client.get(bookKey(owner)))) ?? undefined,
      write: async (owner, seen, next, max) => {
        const written = await this.script(SCRIPTS.book, [bookKey(owner), ownersKey], [seen ?? "", next ?? "", owner, String(max)]);
        return written === 1 ? "written" : written === -1 ? "full" : "changed";
      },
      all: async () => {
        const owners = await this.command(() => this.client.sMembers(ownersKey));
        const books: string[] = [];
        for (let start = 0; start < owners.length; start += MGET_CHUNK) {
          const chunk = owners.slice(start, start + MGET_CHUNK).map(bookKey);
          for (const raw of await this.command(() => this.client.mGet(chunk))) if (raw !== null) books.push(raw);
        }
        return books;
      },
    };
  }

  private taskKey(taskId: string): string {
    return `${this.options.prefix}:task:${taskId}`;
  }

  private ownerKey(ownerHash: string): string {
    return `${this.options.prefix}:index:list:owner:${ownerHash}`;
  }

  /**
   * Up to `count` entries of a listing index below `below`, with their records. An entry whose record
   * is gone, expired or now sits elsewhere (its id created again) counts as empty; the sweep removes it.
   */
  private async listBelow(
    index: string,
    ownerHash: string | undefined,
    below: ListPosition | undefined,
    count: number,
  ): Promise<ListEntry[]> {
    const start = below === undefined ? "+" : `(${listKey(below)}`;
    const members = await this.command(() => this.client.zRange(index, start, "-", { BY: "LEX", REV: true, LIMIT: { offset: 0, count } }));
    if (members.length === 0) return [];
    const positions = members.map(positionOfKey);
    const raws = await this.command(() => this.client.mGet(positions.map((at) => this.taskKey(at.taskId))));
    const now = Date.now();
    return positions.map((at, i) => {
      const raw = raws[i];
      const record = raw === null || raw === undefined ? undefined : live(raw, now);
      const here =
        record !== undefined && listKey(positionOf(record)) === members[i] && (ownerHash ?? record.ownerHash) === record.ownerHash;
      return { at, record: here ? record : undefined };
    });
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

/** Ends a connection already closed for good, or held closed while connectRedis starts it afresh (its destroy() then ends that). */
function destroyQuietly(client: RedisClient): void {
  try {
    client.destroy();
  } catch {
    // a plain node-redis client already closed: nothing left to end
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
