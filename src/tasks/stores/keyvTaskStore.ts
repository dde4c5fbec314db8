// KeyvTaskStore: the store of one process over any keyv storage adapter (store.kind "keyv",
// store.uri), for backends taskgate has no store of its own for (SQLite, MySQL, MongoDB, etcd, …).
//
// One keyv key per record (<taskId> in namespace "taskgate-tasks"), its value the record itself, so keyv's one
// JSON envelope is the only parse of a read; a record with a ttl gets it as the keyv ttl. keyv has no
// compare-and-set and no ordered keys, so: one process per keyv store (its updates queued per task,
// mutate runs once), and the indexes (unfinished ids, the listing order per owner and for all, the
// deadlines) live in this process's memory, built at open from one pass over the adapter's iterator
// (each record parsed once) and kept with every write — no index key, no array that grows. After the
// open, create/get/update are one or two adapter calls and a listing page reads only its records.
//
// Every adapter call has the limit commandTimeoutMs, ending in an error naming the store. Expired
// records are invisible at once (keyv checks the deadline) and deleted by a sweep every
// sweepIntervalMs (adapters without their own expiry keep them otherwise). Push subscriptions: one
// key per owner ("taskgate-push-book:<ownerHash>", value {pushBook: "<book JSON>"}) in the same
// namespace, read at open in the same pass and held in memory after (one process).

import Keyv, { type KeyvStoreAdapter } from "keyv";
import { limit } from "../../util/timeLimit.js";
import { BookTable, type PushBook, PushBooks } from "../pushBook.js";
import type { TaskRecord } from "../taskRecord.js";
import type { TaskListQuery, TaskPage, TaskStore } from "../taskStore.js";
import { ExpiryQueue } from "./expiryQueue.js";
import { KeyedQueue } from "./keyedQueue.js";
import { ListingIndex } from "./listingIndex.js";
import { OperationGate } from "./operationGate.js";
import { assertStorable, deadlineOf, isExpired, isUnfinished, type Mutate, nextRecord } from "./storedRecord.js";
import { type ListEntry, type ListPosition, listKey, positionOf, readPage } from "./taskListing.js";

export interface KeyvTaskStoreOptions {
  /** The adapter (see keyvAdapter.ts for building one from store.uri). */
  adapter: KeyvStoreAdapter;
  /** How errors name the store, e.g. the uri with any password hidden. */
  label: string;
  /** An adapter call not done within this long rejects (default 5 s; config store.commandTimeoutMs). */
  commandTimeoutMs?: number;
  /** How often expired records are deleted (default 60 s). */
  sweepIntervalMs?: number;
  /** A sweep that failed. Default: ignored. */
  onError?: ((error: Error) => void) | undefined;
  /** keyv namespace of the records (default "taskgate-tasks"; config store.prefix when set). */
  namespace?: string;
}

const BOOK_KEY = "taskgate-push-book:";

/** What the in-memory indexes hold of a record. */
interface Held {
  ownerHash: string;
  listKey: string;
  deadline: number | undefined;
}

export async function openKeyvTaskStore(options: KeyvTaskStoreOptions): Promise<TaskStore> {
  const name = `task store (keyv ${options.label})`;
  const namespace = options.namespace ?? "taskgate-tasks";
  const keyv = new Keyv<TaskRecord>({ store: options.adapter, namespace, throwOnErrors: true });
  keyv.on("error", () => undefined); // errors reach the caller as rejections (throwOnErrors)
  const store = new KeyvTaskStore(name, keyv, namespace, options);
  try {
    await store.load();
  } catch (error) {
    await store.close();
    throw new Error(`${name}: cannot read its records: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return store;
}

class KeyvTaskStore implements TaskStore {
  private readonly gate: OperationGate;
  private readonly queue = new KeyedQueue();
  private readonly held = new Map<string, Held>();
  private readonly unfinished = new Set<string>();
  private readonly listing = new ListingIndex();
  private readonly expiry = new ExpiryQueue();
  private readonly timeoutMs: number;
  private readonly sweeper: NodeJS.Timeout;
  private readonly books = new BookTable();
  readonly push: PushBooks;

  constructor(
    private readonly name: string,
    private readonly keyv: Keyv<TaskRecord>,
    private readonly namespace: string,
    options: KeyvTaskStoreOptions,
  ) {
    this.gate = new OperationGate(name);
    this.timeoutMs = options.commandTimeoutMs ?? 5_000;
    const books = keyv as unknown as Keyv<{ pushBook: string }>;
    const persist = async (owner: string, next: string | undefined) => {
      await this.command(next === undefined ? books.delete(`${BOOK_KEY}${owner}`) : books.set(`${BOOK_KEY}${owner}`, { pushBook: next }));
    };
    this.push = new PushBooks(name, this.books.slots(persist), (operation) => this.gate.run(operation));
    const onError = options.onError ?? (() => undefined);
    this.sweeper = setInterval(() => {
      this.sweep().catch((error: unknown) => onError(new Error(`${name}: deleting expired tasks failed`, { cause: error })));
    }, options.sweepIntervalMs ?? 60_000).unref();
  }

  /** Builds the indexes from every stored record (one pass over the adapter's iterator). */
  async load(): Promise<void> {
    if (this.keyv.iterator === undefined) {
      throw new Error(
        "its keyv adapter cannot list its keys (no iterator); use an adapter that can (sqlite, postgres, mysql, redis, mongo, …)",
      );
    }
    const now = Date.now();
    type Stored = (TaskRecord & { pushBook?: undefined }) | { pushBook?: unknown; taskId?: undefined } | undefined;
    for await (const [, record] of this.keyv.iterator(this.namespace) as AsyncGenerator<[string, Stored]>) {
      if (typeof record?.pushBook === "string") this.books.load(JSON.parse(record.pushBook) as PushBook);
      else if (record !== undefined && typeof record.taskId === "string" && !isExpired(record as TaskRecord, now)) {
        this.hold(record as TaskRecord);
      }
    }
  }

  create(record: TaskRecord): Promise<void> {
    return this.gate.run(() =>
      this.queue.run(record.taskId, async () => {
        assertStorable(record);
        if (this.isHeld(record.taskId, Date.now())) throw new Error(`task ${record.taskId} already exists`);
        await this.write(record);
      }),
    );
  }

  get(taskId: string): Promise<TaskRecord | undefined> {
    return this.gate.run(async () => (this.isHeld(taskId, Date.now()) ? this.read(taskId) : undefined));
  }

  update(taskId: string, mutate: Mutate): Promise<TaskRecord | undefined> {
    return this.gate.run(() =>
      this.queue.run(taskId, async () => {
        if (!this.isHeld(taskId, Date.now())) return undefined;
        const current = await this.read(taskId);
        if (current === undefined) return undefined;
        const unchanged = structuredClone(current);
        const next = nextRecord(current, mutate);
        if (next === undefined) return unchanged;
        await this.write(next);
        return next;
      }),
    );
  }

  listUnfinished(): Promise<TaskRecord[]> {
    return this.gate.run(async () => {
      const now = Date.now();
      const ids = [...this.unfinished].filter((id) => this.isHeld(id, now));
      return (await this.readMany(ids)).filter((r): r is TaskRecord => r !== undefined && isUnfinished(r));
    });
  }

  listByOwner(ownerHash: string, query: TaskListQuery): Promise<TaskPage> {
    return this.gate.run(() => readPage(query, (below, count) => this.listBelow(ownerHash, below, count)));
  }

  listAll(query: TaskListQuery): Promise<TaskPage> {
    return this.gate.run(() => readPage(query, (below, count) => this.listBelow(undefined, below, count)));
  }

  /** Forgets and deletes the records whose deadline has passed; returns how many. */
  sweep(): Promise<number> {
    return this.gate.run(async () => {
      const now = Date.now();
      const due: string[] = [];
      for (let next = this.expiry.popDue(now); next !== undefined; next = this.expiry.popDue(now)) {
        if (this.held.get(next.id)?.deadline === next.at) {
          this.forget(next.id);
          due.push(next.id);
        }
      }
      if (due.length > 0) await this.command(this.keyv.delete(due));
      return due.length;
    });
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    return this.gate.close(async () => {
      await limit(this.keyv.disconnect(), this.timeoutMs, () => `${this.name} did not disconnect within ${this.timeoutMs} ms`).catch(
        () => undefined,
      );
    });
  }

  private isHeld(taskId: string, now: number): boolean {
    const held = this.held.get(taskId);
    return held !== undefined && (held.deadline === undefined || now < held.deadline);
  }

  private async read(taskId: string): Promise<TaskRecord | undefined> {
    const record = await this.command(this.keyv.get(taskId));
    return record === undefined || isExpired(record, Date.now()) ? undefined : record;
  }

  private async readMany(ids: string[]): Promise<Array<TaskRecord | undefined>> {
    if (ids.length === 0) return [];
    const now = Date.now();
    const records = await this.command(this.keyv.get(ids));
    return records.map((record) => (record === undefined || isExpired(record, now) ? undefined : record));
  }

  /** Stores the record (resolving once the adapter has it), then indexes it. */
  private async write(record: TaskRecord): Promise<void> {
    const end = deadlineOf(record);
    const ttl = end === undefined ? undefined : Math.max(1, end - Date.now());
    await this.command(this.keyv.set(record.taskId, record, ttl));
    this.hold(record);
  }

  private hold(record: TaskRecord): void {
    const id = record.taskId;
    const was = this.held.get(id);
    const now: Held = { ownerHash: record.ownerHash, listKey: listKey(positionOf(record)), deadline: deadlineOf(record) };
    if (was?.listKey !== now.listKey || was.ownerHash !== now.ownerHash) {
      if (was !== undefined) this.listing.remove(was.ownerHash, was.listKey);
      this.listing.add(now.ownerHash, now.listKey, id);
    }
    if (now.deadline !== undefined && now.deadline !== was?.deadline) this.expiry.push(id, now.deadline);
    this.held.set(id, now);
    if (isUnfinished(record)) this.unfinished.add(id);
    else this.unfinished.delete(id);
  }

  private forget(taskId: string): void {
    const was = this.held.get(taskId);
    if (was === undefined) return;
    this.listing.remove(was.ownerHash, was.listKey);
    this.held.delete(taskId);
    this.unfinished.delete(taskId);
  }

  private async listBelow(ownerHash: string | undefined, below: ListPosition | undefined, count: number): Promise<ListEntry[]> {
    const entries = this.listing.below(ownerHash, below, count);
    const records = await this.readMany(entries.map((entry) => entry.taskId));
    return entries.map(({ at }, i) => ({ at, record: records[i] }));
  }

  private command<T>(work: Promise<T>): Promise<T> {
    const named = work.catch((error: unknown) => {
      throw new Error(`${this.name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    });
    return limit(
      named,
      this.timeoutMs,
      () => `${this.name} did not answer within ${this.timeoutMs} ms (store.commandTimeoutMs; the operation may still be carried out)`,
    );
  }
}
