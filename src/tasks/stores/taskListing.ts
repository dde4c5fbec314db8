// What every store's listing shares (see TaskStore.listByOwner in ../taskStore.ts): the order
// (createdAt as an instant, descending, then taskId descending), the index key that sorts in that
// order as plain text, the cursor (an encoded position: the next page starts just below it), the
// query check and filters, and readPage, which turns a store's ordered index into one page.
//
// A store supplies `readBelow(position, count)`: up to `count` index entries strictly below
// `position` (undefined = from the top), in listing order, each with its record if it is still live
// (undefined for an entry whose record has expired or is gone). Fewer than `count` = the index ends.

import type { TaskRecord } from "../taskRecord.js";
import { InvalidCursorError, LIST_LIMIT_MAX, LIST_SCAN_LIMIT, type TaskListQuery, type TaskPage } from "../taskStore.js";

/** A place in the listing order. */
export interface ListPosition {
  /** createdAt in epoch ms. */
  createdMs: number;
  taskId: string;
}

export interface ListEntry {
  at: ListPosition;
  /** The live record, or undefined when it has expired or is gone. */
  record: TaskRecord | undefined;
}

export type ReadBelow = (below: ListPosition | undefined, count: number) => ListEntry[] | Promise<ListEntry[]>;

export function positionOf(record: TaskRecord): ListPosition {
  return { createdMs: Date.parse(record.createdAt), taskId: record.taskId };
}

/** createdMs is offset into 0..1e16 and zero-padded, so the key's text order is the listing order (years -29719..+282 000). */
const KEY_OFFSET = 1e15;
const KEY_DIGITS = 16;

/** Text that sorts ascending as the positions do: 16 digits of time, a space, the taskId. */
export function listKey(at: ListPosition): string {
  const shifted = Math.min(Math.max(at.createdMs + KEY_OFFSET, 0), 10 ** KEY_DIGITS - 1);
  return `${String(shifted).padStart(KEY_DIGITS, "0")} ${at.taskId}`;
}

export function positionOfKey(key: string): ListPosition {
  return { createdMs: Number(key.slice(0, KEY_DIGITS)) - KEY_OFFSET, taskId: key.slice(KEY_DIGITS + 1) };
}

export function encodeCursor(at: ListPosition): string {
  return Buffer.from(JSON.stringify(["t1", at.createdMs, at.taskId])).toString("base64url");
}

/** The position a cursor names; InvalidCursorError for anything encodeCursor did not make. */
export function decodeCursor(cursor: string): ListPosition {
  const invalid = () =>
    new InvalidCursorError(`invalid task list cursor ${JSON.stringify(cursor.slice(0, 80))}: not one this gateway issued`);
  if (!/^[A-Za-z0-9_-]{1,2000}$/.test(cursor)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 3 || parsed[0] !== "t1") throw invalid();
  const [, createdMs, taskId] = parsed as [unknown, unknown, unknown];
  if (!Number.isSafeInteger(createdMs) || typeof taskId !== "string" || taskId === "") throw invalid();
  return { createdMs: createdMs as number, taskId };
}

/** Throws a RangeError for a limit outside 1..LIST_LIMIT_MAX (a bad cursor is found when it is decoded). */
export function assertListQuery(query: TaskListQuery): void {
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > LIST_LIMIT_MAX) {
    throw new RangeError(`task list limit must be an integer from 1 to ${LIST_LIMIT_MAX}, not ${String(query.limit)}`);
  }
}

export function matchesQuery(record: TaskRecord, query: TaskListQuery): boolean {
  if (query.statuses !== undefined && !query.statuses.includes(record.status)) return false;
  if (query.tool !== undefined && record.tool !== query.tool) return false;
  if (query.backend !== undefined && record.backend !== query.backend) return false;
  return true;
}

/**
 * One page: reads entries below the cursor in batches, keeps live records that match, and stops at
 * `limit` of them (one more tells whether a next page exists) or after LIST_SCAN_LIMIT skipped entries.
 */
export async function readPage(query: TaskListQuery, readBelow: ReadBelow): Promise<TaskPage> {
  assertListQuery(query);
  let below = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const records: TaskRecord[] = [];
  let skipped = 0;
  let batch = query.limit + 1;
  for (;;) {
    const entries = await readBelow(below, batch);
    for (const entry of entries) {
      const { record } = entry;
      if (record !== undefined && matchesQuery(record, query)) {
        if (records.length === query.limit) return { records, nextCursor: encodeCursor(below!) };
        records.push(record);
      } else if (++skipped >= LIST_SCAN_LIMIT) {
        return { records, nextCursor: encodeCursor(entry.at) };
      }
      below = entry.at;
    }
    if (entries.length < batch) return { records };
    // Filtered out so far: read further in bigger steps (bounded by LIST_SCAN_LIMIT).
    batch = Math.min(batch * 2, LIST_SCAN_LIMIT);
  }
}
