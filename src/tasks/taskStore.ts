// TaskStore: where task records live. Five backends, built by stores/createTaskStore.ts, all pass
// the one contract suite test/unit/taskStore.contract.ts: memory (one process), file (one process,
// durable: an fsynced append-only journal), redis and postgres (several instances; on redis and
// postgres read "redis" below for both) and keyv (one process, any keyv adapter).
//
// Contract:
// - create() resolves once the record is stored (file: fsynced; redis: written by Redis) and get()
//   finds it. Creating an id that exists and has not expired rejects ("already exists") and changes
//   nothing; of two concurrent creates of one id exactly one succeeds.
// - get() returns the caller's own copy, or undefined for an unknown id and for a record past
//   createdAt + ttlMs. It never shows a write whose create()/update() has not resolved yet
//   (memory, file; on redis a write is visible as soon as Redis has it).
// - update(id, mutate) runs mutate on a copy of the current record and writes what it returns with
//   version = stored version + 1 (whatever version mutate put there), resolving with the written
//   record once it is stored. mutate returning undefined = no change: the stored record is returned,
//   version unchanged. An unknown or expired id resolves to undefined without calling mutate.
//   Atomic: no other write of the record lands between the read mutate saw and the write. memory,
//   file: one process per data (the file store locks its file), mutate runs exactly once. redis:
//   the write is a compare-and-set; if another instance wrote the record in between, mutate runs
//   again on the new record (bounded; then update rejects naming the task), so mutate must have no
//   effect outside its return value that a second run would repeat or leave behind.
// - listUnfinished() returns every unexpired record not in a terminal status that this store (or an
//   earlier one on the same data; redis: the same instanceId) created or reopened.
// - Cost: create, get and update are O(1) in the number of stored tasks (file: one appended line,
//   its fsync shared with the writes in flight beside it; redis: one round trip for create and get,
//   two for update); listUnfinished is O(unfinished). Expired records leave memory by a timer-driven
//   sweep that pops only due entries from a deadline heap, 1,000 per event-loop turn (memory, file),
//   or by Redis's own PX expiry.
// - Every wait has a limit: a Redis command or file write not done within the store's timeout
//   rejects with an error naming the store and the limit (the write may still land). A store that
//   fails says which store and why.
// - listByOwner(ownerHash, query) / listAll(query) return one page of records, newest first:
//   createdAt descending (as instants, not as text), then taskId descending. Filters (statuses, tool,
//   backend) are applied to the current records; expired records never appear. A page holds at most
//   `limit` records; nextCursor, when present, continues just below the page's last position, so
//   records created meanwhile (newer, above it) neither repeat nor shift the next page. Cost grows with
//   the page, not with the store: each store keeps an index per owner and one for all, ordered by
//   (createdAt, taskId), and reads about `limit` entries plus those a filter skips; a filtered page
//   stops after LIST_SCAN_LIMIT skipped entries and may then hold fewer than `limit` records (even
//   none) with a nextCursor to go on. A cursor this store did not issue rejects with
//   InvalidCursorError; a limit outside 1..LIST_LIMIT_MAX rejects with a RangeError.
// - push: the Web Push subscriptions, one book per owner (pushBook.ts): kept like records (memory:
//   lost on exit; file: "<file>.push.json" beside the journal, replaced whole and fsynced on each
//   change; redis, postgres, keyv: in the shared data, so every instance of a cluster sees them),
//   changed by compare-and-set, at most `perOwner` per owner and PUSH_BOOKS_MAX owners. O(1) per
//   owner; all() reads every book (approval requests, rare).
// - close() waits for the operations already started, then releases what the store holds (file:
//   journal and lock; redis: its connection); later calls reject with "... is closed".

import type { TaskStatus } from "../protocol/wire.js";
import type { PushSubscriptionStore } from "./pushBook.js";
import type { TaskRecord } from "./taskRecord.js";

/** The largest page a listing returns. */
export const LIST_LIMIT_MAX = 500;
/** A filtered page stops after skipping this many index entries (then nextCursor goes on from there). */
export const LIST_SCAN_LIMIT = 5_000;

export interface TaskListQuery {
  /** Only records in one of these statuses; absent = every status. */
  statuses?: readonly TaskStatus[] | undefined;
  /** Only records of this tool (exact name); absent = every tool. */
  tool?: string | undefined;
  /** Only records of this backend (TaskRecord.backend); absent = every backend. */
  backend?: string | undefined;
  /** Page size, 1..LIST_LIMIT_MAX. */
  limit: number;
  /** Opaque cursor from a previous page's nextCursor; absent = the first page. */
  cursor?: string | undefined;
}

export interface TaskPage {
  /** Newest first (createdAt descending, then taskId descending as a tie-break). */
  records: TaskRecord[];
  /** Present when more records may follow. Stable under concurrent inserts of newer records. */
  nextCursor?: string | undefined;
}

/** A listing cursor that this store did not issue (callers answer -32602 / HTTP 400). */
export class InvalidCursorError extends Error {
  override readonly name = "InvalidCursorError";
}

export interface TaskStore {
  create(record: TaskRecord): Promise<void>;
  get(taskId: string): Promise<TaskRecord | undefined>;
  update(taskId: string, mutate: (current: TaskRecord) => TaskRecord | undefined): Promise<TaskRecord | undefined>;
  listUnfinished(): Promise<TaskRecord[]>;
  /** One owner's records (ownerHash), newest first. Cost grows with the page, not with the store. */
  listByOwner(ownerHash: string, query: TaskListQuery): Promise<TaskPage>;
  /** Every owner's records, newest first (the operator view). Same cost rule. */
  listAll(query: TaskListQuery): Promise<TaskPage>;
  /** The Web Push subscriptions (one book per owner). */
  readonly push: PushSubscriptionStore;
  close(): Promise<void>;
}
