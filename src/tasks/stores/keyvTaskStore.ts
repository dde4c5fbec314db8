// KeyvTaskStore: the one TaskStore implementation, over any keyv 5 instance (memory Map, keyv-file, Redis).
// Records are JSON under "task:<id>", gone at createdAt + ttlMs (checked on read, and a keyv ttl). Writes are
// serialised in-process only (one writer per record). The index key (default "index:unfinished", one per
// instance on Redis) makes listUnfinished() "the unfinished tasks this store created", not all in a shared store.

import type { Keyv } from "keyv";
import { TERMINAL_STATUSES } from "../../protocol/wire.js";
import type { TaskRecord } from "../taskRecord.js";
import type { TaskStore } from "../taskStore.js";

const TASK_PREFIX = "task:";
const DEFAULT_INDEX_KEY = "index:unfinished";
/** Lock name for the index; cannot collide with TASK_PREFIX-based lock names. */
const INDEX_LOCK = "index";

export interface KeyvTaskStoreOptions {
  /**
   * Key of the unfinished-task index (default "index:unfinished"). The index is a read-modify-write
   * guarded by an in-process lock, so stores sharing one backend (several instances on one Redis)
   * must each use their own key; listUnfinished() then sees only the tasks this store created.
   */
  indexKey?: string;
  /** Run by close() once in-flight operations have settled, before keyv.disconnect() (e.g. a file flush). */
  onClose?: () => Promise<void>;
}

/** In-process mutex per name: run() calls for the same name execute one after another, in call order. */
class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(name) ?? Promise.resolve();
    const result = previous.then(fn);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(name, tail);
    void tail.then(() => {
      if (this.tails.get(name) === tail) this.tails.delete(name);
    });
    return result;
  }
}

function isUnfinished(record: TaskRecord): boolean {
  return !TERMINAL_STATUSES.has(record.status);
}

/** Epoch ms at which the record disappears, or undefined if it never does. */
function deadline(record: TaskRecord): number | undefined {
  return record.ttlMs === null ? undefined : Date.parse(record.createdAt) + record.ttlMs;
}

function isExpired(record: TaskRecord, now: number): boolean {
  const end = deadline(record);
  return end !== undefined && now >= end;
}

function assertStorable(record: TaskRecord): void {
  if (typeof record.taskId !== "string" || record.taskId === "") {
    throw new TypeError("task record needs a non-empty taskId");
  }
  if (Number.isNaN(Date.parse(record.createdAt))) {
    throw new TypeError(`task ${record.taskId}: createdAt is not a parseable date: ${String(record.createdAt)}`);
  }
  if (record.ttlMs !== null && !(Number.isFinite(record.ttlMs) && record.ttlMs >= 0)) {
    throw new TypeError(`task ${record.taskId}: ttlMs must be null or a non-negative finite number`);
  }
}

export class KeyvTaskStore implements TaskStore {
  private readonly locks = new KeyedMutex();
  private readonly inflight = new Set<Promise<unknown>>();
  private closing: Promise<void> | undefined;
  private readonly indexKey: string;

  constructor(
    private readonly keyv: Keyv,
    private readonly options: KeyvTaskStoreOptions = {},
  ) {
    this.indexKey = options.indexKey ?? DEFAULT_INDEX_KEY;
    if (this.indexKey === "" || this.indexKey.startsWith(TASK_PREFIX)) {
      throw new TypeError(`index key must be non-empty and not start with "${TASK_PREFIX}": ${JSON.stringify(this.indexKey)}`);
    }
  }

  create(record: TaskRecord): Promise<void> {
    return this.track(() => {
      assertStorable(record);
      const id = record.taskId;
      return this.locks.run(TASK_PREFIX + id, async () => {
        if ((await this.readLive(id)) !== undefined) {
          throw new Error(`task ${id} already exists`);
        }
        // Index before record: a crash in between leaves an index entry with no record (pruned
        // later), never a running record that listUnfinished() cannot see.
        if (isUnfinished(record)) await this.indexAdd(id);
        await this.write(record);
      });
    });
  }

  get(taskId: string): Promise<TaskRecord | undefined> {
    return this.track(() => this.readLive(taskId));
  }

  update(
    taskId: string,
    mutate: (current: TaskRecord) => TaskRecord | undefined,
  ): Promise<TaskRecord | undefined> {
    return this.track(() =>
      this.locks.run(TASK_PREFIX + taskId, async () => {
        const current = await this.readLive(taskId);
        if (current === undefined) return undefined;
        // mutate gets its own copy, so in-place edits followed by "return undefined" change nothing.
        const proposed = mutate(structuredClone(current));
        if (proposed === undefined) return current;
        if (proposed.taskId !== taskId) {
          throw new Error(`update of task ${taskId} tried to change its taskId to ${String(proposed.taskId)}`);
        }
        const next: TaskRecord = { ...proposed, version: current.version + 1 };
        assertStorable(next);
        const wasOpen = isUnfinished(current);
        const isOpen = isUnfinished(next);
        if (isOpen && !wasOpen) await this.indexAdd(taskId);
        await this.write(next);
        // Remove after the terminal record is written (same crash argument as in create()).
        if (wasOpen && !isOpen) await this.indexRemove(taskId);
        return next;
      }),
    );
  }

  listUnfinished(): Promise<TaskRecord[]> {
    return this.track(async () => {
      const ids = await this.readIndex();
      const records = await Promise.all(ids.map((id) => this.readLive(id)));
      const open: TaskRecord[] = [];
      const stale: string[] = [];
      records.forEach((record, i) => {
        if (record !== undefined && isUnfinished(record)) open.push(record);
        else stale.push(ids[i]!);
      });
      for (const id of stale) await this.pruneIfStale(id);
      return open;
    });
  }

  /** Waits for operations already started, flushes (onClose), disconnects. Later calls reject. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
      await this.options.onClose?.();
      await this.keyv.disconnect();
    })();
    return this.closing;
  }

  // --- internals ---------------------------------------------------------------------------

  private track<T>(operation: () => Promise<T>): Promise<T> {
    if (this.closing !== undefined) return Promise.reject(new Error("task store is closed"));
    let promise: Promise<T>;
    try {
      promise = operation();
    } catch (error) {
      promise = Promise.reject(error);
    }
    this.inflight.add(promise);
    const forget = () => {
      this.inflight.delete(promise);
    };
    promise.then(forget, forget);
    return promise;
  }

  /** The stored record if present and unexpired; a fresh object on every call. */
  private async readLive(taskId: string): Promise<TaskRecord | undefined> {
    const raw = await this.keyv.get<string>(TASK_PREFIX + taskId);
    if (typeof raw !== "string") return undefined;
    const record = JSON.parse(raw) as TaskRecord;
    return isExpired(record, Date.now()) ? undefined : record;
  }

  private async write(record: TaskRecord): Promise<void> {
    const end = deadline(record);
    // keyv treats ttl 0 as "no ttl" (overriding any Keyv-wide default ttl), so 0 = never expires;
    // a record already past its deadline still gets a positive ttl so the backend drops it.
    const ttl = end === undefined ? 0 : Math.max(1, end - Date.now());
    await this.keyv.set(TASK_PREFIX + record.taskId, JSON.stringify(record), ttl);
  }

  private async readIndex(): Promise<string[]> {
    const raw = await this.keyv.get<string>(this.indexKey);
    return typeof raw === "string" ? (JSON.parse(raw) as string[]) : [];
  }

  private indexAdd(taskId: string): Promise<void> {
    return this.locks.run(INDEX_LOCK, async () => {
      const ids = await this.readIndex();
      if (ids.includes(taskId)) return;
      ids.push(taskId);
      await this.keyv.set(this.indexKey, JSON.stringify(ids), 0);
    });
  }

  private indexRemove(taskId: string): Promise<void> {
    return this.locks.run(INDEX_LOCK, async () => {
      const ids = await this.readIndex();
      const kept = ids.filter((id) => id !== taskId);
      if (kept.length === ids.length) return;
      await this.keyv.set(this.indexKey, JSON.stringify(kept), 0);
    });
  }

  /** Re-checks under the task's lock (a create() may be between its index and record writes). */
  private pruneIfStale(taskId: string): Promise<void> {
    return this.locks.run(TASK_PREFIX + taskId, async () => {
      const record = await this.readLive(taskId);
      if (record === undefined || !isUnfinished(record)) await this.indexRemove(taskId);
    });
  }
}
