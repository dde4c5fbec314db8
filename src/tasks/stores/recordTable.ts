// RecordTable: task records held in process memory as their JSON text, with the unfinished ids in a
// Set, the deadlines in an ExpiryQueue and the listing order in B+ trees (one per owner, one for all,
// keyed by taskListing's listKey), so every operation is O(1) or O(log n) in the number of records,
// listing the unfinished ones is O(unfinished) and a listing page reads only its own entries. Used by the memory store and as the
// durable journal store's view of its file. Expired rows stay until sweep() drops them (reads treat
// them as absent at once); sweep is driven by a timer, in bounded chunks (startSweeper).

import type { TaskRecord } from "../taskRecord.js";
import { ExpiryQueue } from "./expiryQueue.js";
import { ListingIndex } from "./listingIndex.js";
import { deadlineOf, isUnfinished, liveRecord } from "./storedRecord.js";
import { type ListEntry, type ListPosition, listKey, positionOf } from "./taskListing.js";

interface Row {
  json: string;
  /** createdAt + ttlMs in epoch ms; undefined = never expires. */
  deadline: number | undefined;
  bytes: number;
  ownerHash: string;
  listKey: string;
}

/** What the table needs to know about a record besides its JSON. */
export interface RowFacts {
  deadline: number | undefined;
  unfinished: boolean;
  ownerHash: string;
  listKey: string;
}

/** Taken when the write is made, so later edits to the caller's object cannot change the row. */
export function factsOf(record: TaskRecord): RowFacts {
  return {
    deadline: deadlineOf(record),
    unfinished: isUnfinished(record),
    ownerHash: record.ownerHash,
    listKey: listKey(positionOf(record)),
  };
}

/** At most this many expired rows are dropped per event-loop turn; a longer sweep continues on the next. */
export const SWEEP_CHUNK = 1_000;

export class RecordTable {
  private readonly rows = new Map<string, Row>();
  private readonly unfinishedIds = new Set<string>();
  private readonly expiry = new ExpiryQueue();
  private readonly listing = new ListingIndex();
  private bytes = 0;

  /** UTF-8 bytes of the live rows' JSON (expired but unswept rows included). */
  get liveBytes(): number {
    return this.bytes;
  }

  get size(): number {
    return this.rows.size;
  }

  /** The stored JSON of an unexpired record, or undefined. */
  json(taskId: string, now: number): string | undefined {
    const row = this.rows.get(taskId);
    if (row === undefined || (row.deadline !== undefined && now >= row.deadline)) return undefined;
    return row.json;
  }

  /** Stores `json` as the record's current state; `facts` = factsOf(the record `json` is the text of). */
  put(id: string, json: string, { deadline, unfinished, ownerHash, listKey }: RowFacts): void {
    const bytes = Buffer.byteLength(json) + 1; // + the journal's line break
    const old = this.rows.get(id);
    if (old !== undefined) this.bytes -= old.bytes;
    this.rows.set(id, { json, deadline, bytes, ownerHash, listKey });
    this.bytes += bytes;
    if (old?.listKey !== listKey || old.ownerHash !== ownerHash) {
      if (old !== undefined) this.listing.remove(old.ownerHash, old.listKey);
      this.listing.add(ownerHash, listKey, id);
    }
    if (unfinished) this.unfinishedIds.add(id);
    else this.unfinishedIds.delete(id);
    if (deadline !== undefined && deadline !== old?.deadline) this.expiry.push(id, deadline);
  }

  /** JSON of every unexpired unfinished record; O(unfinished). */
  unfinished(now: number): string[] {
    const out: string[] = [];
    for (const id of this.unfinishedIds) {
      const json = this.json(id, now);
      if (json !== undefined) out.push(json);
    }
    return out;
  }

  /**
   * Up to `count` listing entries strictly below `below` (undefined = from the newest), newest first,
   * of one owner or (ownerHash undefined) of all; an expired row's entry has record undefined.
   */
  listBelow(ownerHash: string | undefined, below: ListPosition | undefined, count: number, now: number): ListEntry[] {
    return this.listing.below(ownerHash, below, count).map(({ at, taskId }) => {
      const json = this.json(taskId, now);
      return { at, record: json === undefined ? undefined : liveRecord(json, now) };
    });
  }

  /** JSON of every unexpired record (for rewriting a journal). */
  *live(now: number): Generator<string> {
    for (const row of this.rows.values()) {
      if (row.deadline === undefined || now < row.deadline) yield row.json;
    }
  }

  /** Drops up to `max` expired rows, earliest first; returns how many it dropped. */
  sweep(now: number, max = SWEEP_CHUNK): number {
    let dropped = 0;
    while (dropped < max) {
      const due = this.expiry.popDue(now);
      if (due === undefined) break;
      const row = this.rows.get(due.id);
      if (row === undefined || row.deadline !== due.at) continue; // stale entry: record changed or gone
      this.rows.delete(due.id);
      this.unfinishedIds.delete(due.id);
      this.listing.remove(row.ownerHash, row.listKey);
      this.bytes -= row.bytes;
      dropped++;
    }
    return dropped;
  }
}

/**
 * Sweeps `table` every `intervalMs`: SWEEP_CHUNK rows per event-loop turn until none is due, so a
 * burst of expiries never blocks the process for long. Returns the function that stops it.
 */
export function startSweeper(table: RecordTable, intervalMs: number): () => void {
  let next: NodeJS.Immediate | undefined;
  const run = () => {
    next = undefined;
    if (table.sweep(Date.now()) === SWEEP_CHUNK) next = setImmediate(run).unref();
  };
  const timer = setInterval(() => {
    if (next === undefined) run();
  }, intervalMs).unref();
  return () => {
    clearInterval(timer);
    if (next !== undefined) clearImmediate(next);
  };
}
