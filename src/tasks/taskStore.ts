// TaskStore: where task records live. Three backends, built by stores/createTaskStore.ts, all pass
// the one contract suite test/unit/taskStore.contract.ts: memory (one process), file (one process,
// durable: an fsynced append-only journal) and redis (several instances).
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
// - close() waits for the operations already started, then releases what the store holds (file:
//   journal and lock; redis: its connection); later calls reject with "... is closed".

import type { TaskRecord } from "./taskRecord.js";

export interface TaskStore {
  create(record: TaskRecord): Promise<void>;
  get(taskId: string): Promise<TaskRecord | undefined>;
  update(taskId: string, mutate: (current: TaskRecord) => TaskRecord | undefined): Promise<TaskRecord | undefined>;
  listUnfinished(): Promise<TaskRecord[]>;
  close(): Promise<void>;
}
