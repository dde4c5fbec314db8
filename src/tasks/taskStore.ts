// TaskStore: where task records live. Backends (memory, file, redis) sit behind keyv and all pass
// test/unit/taskStore.contract.ts.
//
// Contract:
// - create() resolves only once a get() for the same id would find the record.
// - get() returns undefined for unknown ids and for records past createdAt + ttlMs.
// - update() applies `mutate` to the current record atomically with respect to other update()
//   calls on this store instance, bumps `version`, persists, and returns the new record;
//   `mutate` returning undefined means "no change" (the current record is returned as is).
//   Unknown or expired ids resolve to undefined and mutate is not called.
// - listUnfinished() returns every unexpired record whose status is not terminal, among those created by
//   this store or an earlier one on the same data (redis: same instanceId; others' records only via get()).

import type { TaskRecord } from "./taskRecord.js";

export interface TaskStore {
  create(record: TaskRecord): Promise<void>;
  get(taskId: string): Promise<TaskRecord | undefined>;
  update(taskId: string, mutate: (current: TaskRecord) => TaskRecord | undefined): Promise<TaskRecord | undefined>;
  listUnfinished(): Promise<TaskRecord[]>;
  close(): Promise<void>;
}
