// MemoryTaskStore: the TaskStore of one process, lost when it exits. Records live in a RecordTable
// (JSON text, so a read is one JSON.parse and the caller always gets its own copy); every operation
// runs synchronously inside the call, so update() is atomic and mutate runs exactly once. Expired
// records are dropped by a timer-driven sweep (every sweepIntervalMs, in bounded chunks). Push
// subscriptions live in a BookTable beside them.

import { BookTable, PushBooks } from "../pushBook.js";
import type { TaskRecord } from "../taskRecord.js";
import type { TaskListQuery, TaskPage, TaskStore } from "../taskStore.js";
import { factsOf, RecordTable, startSweeper } from "./recordTable.js";
import { assertStorable, type Mutate, nextRecord } from "./storedRecord.js";
import { readPage } from "./taskListing.js";

export interface MemoryTaskStoreOptions {
  /** How often expired records are dropped from memory (default 60 s). */
  sweepIntervalMs?: number;
}

export class MemoryTaskStore implements TaskStore {
  private readonly table = new RecordTable();
  readonly push = new PushBooks("task store (memory)", new BookTable().slots(), async (operation) => {
    this.assertOpen();
    return operation();
  });
  private readonly stopSweeper: () => void;
  private closed = false;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.stopSweeper = startSweeper(this.table, options.sweepIntervalMs ?? 60_000);
  }

  async create(record: TaskRecord): Promise<void> {
    this.assertOpen();
    assertStorable(record);
    if (this.table.json(record.taskId, Date.now()) !== undefined) throw new Error(`task ${record.taskId} already exists`);
    this.table.put(record.taskId, JSON.stringify(record), factsOf(record));
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    this.assertOpen();
    const json = this.table.json(taskId, Date.now());
    return json === undefined ? undefined : (JSON.parse(json) as TaskRecord);
  }

  async update(taskId: string, mutate: Mutate): Promise<TaskRecord | undefined> {
    this.assertOpen();
    const json = this.table.json(taskId, Date.now());
    if (json === undefined) return undefined;
    const next = nextRecord(JSON.parse(json) as TaskRecord, mutate);
    // No change: a fresh copy, since mutate may have edited the one it was given.
    if (next === undefined) return JSON.parse(json) as TaskRecord;
    this.table.put(taskId, JSON.stringify(next), factsOf(next));
    return next;
  }

  async listUnfinished(): Promise<TaskRecord[]> {
    this.assertOpen();
    return this.table.unfinished(Date.now()).map((json) => JSON.parse(json) as TaskRecord);
  }

  async listByOwner(ownerHash: string, query: TaskListQuery): Promise<TaskPage> {
    this.assertOpen();
    return readPage(query, (below, count) => this.table.listBelow(ownerHash, below, count, Date.now()));
  }

  async listAll(query: TaskListQuery): Promise<TaskPage> {
    this.assertOpen();
    return readPage(query, (below, count) => this.table.listBelow(undefined, below, count, Date.now()));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopSweeper();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error("task store (memory) is closed");
  }
}
