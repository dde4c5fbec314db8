// PostgresTaskStore: the store shared by the instances on one PostgreSQL database (store.kind
// "postgres", store.url). One row per record in taskgate_tasks (schema: cluster/postgresSchema.ts):
// the record's JSON text (one JSON.parse per read) beside the columns its indexes need — owner and
// createdAt for listing (B-tree indexes in listing order, read with a row comparison below the
// cursor, so a page reads its own rows), the instance that created or reopened it while unfinished
// (a partial index: listUnfinished is O(unfinished)), the deadline (expired rows are invisible at
// once and deleted by a sweep every sweepIntervalMs, 1,000 per statement), and status, tool and
// backend for the listing filters.
//
// create is one INSERT … ON CONFLICT that replaces only an expired row (exactly one of two
// concurrent creates wins). update reads the row, runs mutate and writes with UPDATE … WHERE
// record = <the text it read> (compare-and-set); if another instance wrote in between, mutate runs
// again on the newer record (up to maxUpdateAttempts). Updates on one instance are queued per task.
// Every statement has the limit store.commandTimeoutMs (see PostgresPool.run), naming the database.
// Push subscriptions: one row per owner in taskgate_push_books, changed by compare-and-set on its text.

import type { PostgresPool } from "../../cluster/postgresConnection.js";
import { type BookSlots, PushBooks, type SlotWrite } from "../pushBook.js";
import type { TaskRecord } from "../taskRecord.js";
import type { TaskListQuery, TaskPage, TaskStore } from "../taskStore.js";
import { KeyedQueue } from "./keyedQueue.js";
import { OperationGate } from "./operationGate.js";
import { assertStorable, compareAndSetUpdate, deadlineOf, isUnfinished, liveRecord, type Mutate } from "./storedRecord.js";
import { type ListEntry, type ListPosition, positionOf, readPage } from "./taskListing.js";

export interface PostgresTaskStoreOptions {
  /** Opens the pool this store uses (schema checked) and closes on close(). */
  connect: () => Promise<PostgresPool>;
  /** This instance; listUnfinished returns the unfinished records it created or reopened. */
  instanceId: string;
  /** Tries of an update whose record another instance keeps changing (default 10). */
  maxUpdateAttempts?: number;
  /** How often expired rows are deleted (default 60 s). */
  sweepIntervalMs?: number;
  /** A sweep that failed (it runs again at the next interval). Default: ignored. */
  onError?: ((error: Error) => void) | undefined;
}

const SWEEP_CHUNK = 1_000;
const LIVE = "(deadline_ms IS NULL OR deadline_ms > $1)";
const COLUMNS = "task_id, owner_hash, created_ms, deadline_ms, unfinished_by, status, tool, backend, version, record";

export async function openPostgresTaskStore(options: PostgresTaskStoreOptions): Promise<TaskStore> {
  if (options.instanceId === "") throw new TypeError("postgres task store needs a non-empty instanceId");
  const db = await options.connect();
  return new PostgresTaskStore(db, options);
}

/** The column values of a record, in COLUMNS order. */
function rowOf(record: TaskRecord, json: string, unfinishedBy: string | null): unknown[] {
  const created = positionOf(record).createdMs;
  return [
    record.taskId,
    record.ownerHash,
    created,
    deadlineOf(record) ?? null,
    unfinishedBy,
    record.status,
    record.tool,
    record.backend ?? null,
    record.version,
    json,
  ];
}

class PostgresTaskStore implements TaskStore {
  private readonly name: string;
  private readonly gate: OperationGate;
  private readonly queue = new KeyedQueue();
  private readonly sweeper: NodeJS.Timeout;
  readonly push: PushBooks;

  constructor(
    private readonly db: PostgresPool,
    private readonly options: PostgresTaskStoreOptions,
  ) {
    this.name = `task store (${db.label})`;
    this.gate = new OperationGate(this.name);
    this.push = new PushBooks(this.name, this.bookSlots(), (operation) => this.gate.run(operation));
    const onError = options.onError ?? (() => undefined);
    this.sweeper = setInterval(() => {
      this.sweep().catch((error: unknown) => onError(new Error(`${this.name}: deleting expired tasks failed`, { cause: error })));
    }, options.sweepIntervalMs ?? 60_000).unref();
  }

  create(record: TaskRecord): Promise<void> {
    return this.gate.run(async () => {
      assertStorable(record);
      const values = rowOf(record, JSON.stringify(record), isUnfinished(record) ? this.options.instanceId : null);
      const replace = COLUMNS.split(", ")
        .map((column) => `${column} = EXCLUDED.${column}`)
        .join(", ");
      const placeholders = values.map((_, i) => `$${i + 2}`).join(", ");
      const inserted = await this.run(
        `INSERT INTO taskgate_tasks (${COLUMNS}) VALUES (${placeholders})
         ON CONFLICT (task_id) DO UPDATE SET ${replace} WHERE taskgate_tasks.deadline_ms <= $1`,
        [Date.now(), ...values],
      );
      if (inserted.rowCount !== 1) throw new Error(`task ${record.taskId} already exists`);
    });
  }

  get(taskId: string): Promise<TaskRecord | undefined> {
    return this.gate.run(async () => {
      const now = Date.now();
      const found = await this.run<{ record: string }>(`SELECT record FROM taskgate_tasks WHERE task_id = $2 AND ${LIVE}`, [now, taskId]);
      const json = found.rows[0]?.record;
      return json === undefined ? undefined : liveRecord(json, now);
    });
  }

  update(taskId: string, mutate: Mutate): Promise<TaskRecord | undefined> {
    return this.gate.run(() =>
      this.queue.run(taskId, () =>
        compareAndSetUpdate<string>({
          store: this.name,
          taskId,
          mutate,
          maxAttempts: this.options.maxUpdateAttempts ?? 10,
          read: async () => {
            const now = Date.now();
            const found = await this.run<{ record: string }>(`SELECT record FROM taskgate_tasks WHERE task_id = $2 AND ${LIVE}`, [
              now,
              taskId,
            ]);
            const json = found.rows[0]?.record;
            const record = json === undefined ? undefined : liveRecord(json, now);
            return json === undefined || record === undefined ? undefined : { record, seen: json };
          },
          write: async (seen, _current, next) => {
            // Still unfinished: keep the instance that lists it; reopened: this one; finished: none.
            const values = rowOf(next, JSON.stringify(next), isUnfinished(next) ? this.options.instanceId : null);
            const written = await this.run(
              `UPDATE taskgate_tasks SET owner_hash = $3, created_ms = $4, deadline_ms = $5,
                 unfinished_by = CASE WHEN $6::text IS NULL THEN NULL ELSE COALESCE(unfinished_by, $6) END,
                 status = $7, tool = $8, backend = $9, version = $10, record = $11
               WHERE task_id = $2 AND record = $1`,
              [seen, ...values],
            );
            return written.rowCount === 1;
          },
        }),
      ),
    );
  }

  listUnfinished(): Promise<TaskRecord[]> {
    return this.gate.run(async () => {
      const now = Date.now();
      const found = await this.run<{ record: string }>(`SELECT record FROM taskgate_tasks WHERE unfinished_by = $2 AND ${LIVE}`, [
        now,
        this.options.instanceId,
      ]);
      return found.rows.map((row) => JSON.parse(row.record) as TaskRecord);
    });
  }

  listByOwner(ownerHash: string, query: TaskListQuery): Promise<TaskPage> {
    return this.gate.run(() => readPage(query, (below, count) => this.listBelow(ownerHash, query, below, count)));
  }

  listAll(query: TaskListQuery): Promise<TaskPage> {
    return this.gate.run(() => readPage(query, (below, count) => this.listBelow(undefined, query, below, count)));
  }

  /** Deletes expired rows, SWEEP_CHUNK per statement, until none is due; returns how many. */
  sweep(): Promise<number> {
    return this.gate.run(async () => {
      let total = 0;
      for (;;) {
        const deleted = await this.run(
          `DELETE FROM taskgate_tasks WHERE task_id IN (SELECT task_id FROM taskgate_tasks WHERE deadline_ms <= $1 LIMIT ${SWEEP_CHUNK})`,
          [Date.now()],
        );
        total += deleted.rowCount ?? 0;
        if ((deleted.rowCount ?? 0) < SWEEP_CHUNK) return total;
      }
    });
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    return this.gate.close(() => this.db.close());
  }

  /** The rows below `below` in listing order, filters applied by PostgreSQL (readPage checks them again). */
  private async listBelow(
    ownerHash: string | undefined,
    query: TaskListQuery,
    below: ListPosition | undefined,
    count: number,
  ): Promise<ListEntry[]> {
    const now = Date.now();
    const values: unknown[] = [now];
    const where = [LIVE];
    const param = (value: unknown) => {
      values.push(value);
      return `$${values.length}`;
    };
    if (ownerHash !== undefined) where.push(`owner_hash = ${param(ownerHash)}`);
    if (below !== undefined) where.push(`(created_ms, task_id) < (${param(below.createdMs)}, ${param(below.taskId)})`);
    if (query.statuses !== undefined) where.push(`status = ANY(${param(query.statuses)})`);
    if (query.tool !== undefined) where.push(`tool = ${param(query.tool)}`);
    if (query.backend !== undefined) where.push(`backend = ${param(query.backend)}`);
    const found = await this.run<{ record: string }>(
      `SELECT record FROM taskgate_tasks WHERE ${where.join(" AND ")} ORDER BY created_ms DESC, task_id DESC LIMIT ${param(count)}`,
      values,
    );
    return found.rows.map((row) => {
      const record = JSON.parse(row.record) as TaskRecord;
      return { at: positionOf(record), record };
    });
  }

  private bookSlots(): BookSlots {
    const read = async (owner: string) =>
      (await this.run<{ book: string }>("SELECT book FROM taskgate_push_books WHERE owner_hash = $1", [owner])).rows[0]?.book;
    const write = async (owner: string, seen: string | undefined, next: string | undefined, max: number): Promise<SlotWrite> => {
      if (seen === undefined && next !== undefined) {
        const inserted = await this.run(
          `INSERT INTO taskgate_push_books (owner_hash, book) SELECT $1, $2
           WHERE (SELECT count(*) FROM taskgate_push_books) < $3 ON CONFLICT (owner_hash) DO NOTHING`,
          [owner, next, max],
        );
        if (inserted.rowCount === 1) return "written";
        return (await read(owner)) === undefined ? "full" : "changed";
      }
      const changed =
        next === undefined
          ? await this.run("DELETE FROM taskgate_push_books WHERE owner_hash = $1 AND book = $2", [owner, seen])
          : await this.run("UPDATE taskgate_push_books SET book = $3 WHERE owner_hash = $1 AND book = $2", [owner, seen, next]);
      return changed.rowCount === 1 ? "written" : "changed";
    };
    const all = async () => (await this.run<{ book: string }>("SELECT book FROM taskgate_push_books", [])).rows.map((row) => row.book);
    return { read, write, all };
  }

  private run<R extends { [column: string]: unknown }>(text: string, values: unknown[]) {
    return this.db.run<R>(text, values, this.name);
  }
}
