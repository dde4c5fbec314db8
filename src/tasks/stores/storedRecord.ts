// What every task-store backend checks and computes about a record, so the three agree: whether it
// may be stored, when it expires, whether it counts as unfinished, and the record an update writes
// (mutate's result with version = stored version + 1). Records are stored as their JSON text; the
// JSON.parse of a read is the only copy the caller gets.

import { TERMINAL_STATUSES } from "../../protocol/wire.js";
import type { TaskRecord } from "../taskRecord.js";

export function isUnfinished(record: TaskRecord): boolean {
  return !TERMINAL_STATUSES.has(record.status);
}

/** Epoch ms at which the record disappears (createdAt + ttlMs), or undefined if it never does. */
export function deadlineOf(record: TaskRecord): number | undefined {
  return record.ttlMs === null ? undefined : Date.parse(record.createdAt) + record.ttlMs;
}

export function isExpired(record: TaskRecord, now: number): boolean {
  const end = deadlineOf(record);
  return end !== undefined && now >= end;
}

/** Throws a TypeError naming the task if the record cannot be stored (bad id, date or ttl). */
export function assertStorable(record: TaskRecord): void {
  if (typeof record.taskId !== "string" || record.taskId === "" || /[\r\n]/.test(record.taskId)) {
    throw new TypeError("task record needs a non-empty taskId without line breaks");
  }
  if (Number.isNaN(Date.parse(record.createdAt))) {
    throw new TypeError(`task ${record.taskId}: createdAt is not a parseable date: ${String(record.createdAt)}`);
  }
  if (record.ttlMs !== null && !(Number.isFinite(record.ttlMs) && record.ttlMs >= 0)) {
    throw new TypeError(`task ${record.taskId}: ttlMs must be null or a non-negative finite number`);
  }
}

export type Mutate = (current: TaskRecord) => TaskRecord | undefined;

/**
 * Runs mutate on `current` (a fresh parse of the stored JSON, the caller's own copy) and returns the
 * record to write, or undefined for "no change". Throws if mutate changed the taskId or returned
 * something that cannot be stored.
 */
export function nextRecord(current: TaskRecord, mutate: Mutate): TaskRecord | undefined {
  const version = current.version;
  const taskId = current.taskId;
  const proposed = mutate(current);
  if (proposed === undefined) return undefined;
  if (proposed.taskId !== taskId) {
    throw new Error(`update of task ${taskId} tried to change its taskId to ${String(proposed.taskId)}`);
  }
  const next: TaskRecord = { ...proposed, version: version + 1 };
  assertStorable(next);
  return next;
}

/** A read of stored JSON: the record, or undefined if it has expired by `now`. */
export function liveRecord(json: string, now: number): TaskRecord | undefined {
  const record = JSON.parse(json) as TaskRecord;
  return isExpired(record, now) ? undefined : record;
}

/** One read of a shared store: the record and what its compare-and-set write needs to check. */
export interface ReadForUpdate<S> {
  record: TaskRecord;
  /** What the write compares against (the stored text, say). */
  seen: S;
}

/**
 * update() on a store several instances write (redis, postgres): read, run mutate, write only if the
 * record is still what was read; if not, run mutate again on the newer record, up to maxAttempts,
 * then reject naming the task and `store`. `read` returns a fresh parse each call (mutate may edit
 * its argument, so "no change" returns another read's copy).
 */
export async function compareAndSetUpdate<S>(options: {
  store: string;
  taskId: string;
  mutate: Mutate;
  maxAttempts: number;
  read: () => Promise<ReadForUpdate<S> | undefined>;
  /** Writes `next` if the record is still `seen`; false when another writer changed it meanwhile. */
  write: (seen: S, current: TaskRecord, next: TaskRecord) => Promise<boolean>;
}): Promise<TaskRecord | undefined> {
  for (let attempt = 1; ; attempt++) {
    const read = await options.read();
    if (read === undefined) return undefined;
    const unchanged = structuredClone(read.record);
    const next = nextRecord(read.record, options.mutate);
    if (next === undefined) return unchanged;
    if (await options.write(read.seen, unchanged, next)) return next;
    if (attempt >= options.maxAttempts) {
      throw new Error(
        `${options.store}: task ${options.taskId} was changed by another writer during each of ${attempt} attempts ` +
          "to update it; this update was not written",
      );
    }
  }
}
