// JournalTaskStore: the durable single-process store (store.kind "file"). Every record lives in
// memory (a RecordTable: lookups, the unfinished index and expiry are O(1)/O(log n)) and in an
// append-only journal file (taskJournal.ts): create() and update() append one line and resolve once
// it is fsynced, so a crash at any moment loses nothing acknowledged. Reads see only writes that are
// on disk; writes see the latest write even while it is still in flight, so update() never needs a
// lock and mutate runs exactly once. The file is rewritten to its live records (compaction) when it
// grows past twice their size, and at start when it holds anything else (superseded or expired
// records, a torn last line).
//
// Opening: takes "<file>.lock" (one process per file, see storeLock.ts); creates the file if it does
// not exist; loads a journal, tolerating a torn last line; imports a taskgate 0.1 keyv-file store
// (keeping a copy as "<file>.keyv-file-backup"); refuses anything else with an error naming the file.
// A write not on disk within writeTimeoutMs rejects (it may still land); a failed write stops all
// writes until restart (see JournalWriter). Push subscriptions: "<file>.push.json" (pushBookFile.ts),
// loaded at open, each change on disk (within writeTimeoutMs) before it counts.

import { copyFile, mkdir, open, readFile } from "node:fs/promises";
import path from "node:path";
import { limit } from "../../util/timeLimit.js";
import { BookTable, PushBooks } from "../pushBook.js";
import type { TaskRecord } from "../taskRecord.js";
import type { TaskListQuery, TaskPage, TaskStore } from "../taskStore.js";
import { recordsFromKeyvFile } from "./keyvFileImport.js";
import { OperationGate } from "./operationGate.js";
import { loadPushBooks, pushBookFileOf, writePushBooks } from "./pushBookFile.js";
import { factsOf, RecordTable, startSweeper } from "./recordTable.js";
import { assertStorable, liveRecord, type Mutate, nextRecord } from "./storedRecord.js";
import { acquireStoreLock, type StoreLock } from "./storeLock.js";
import { HEADER_BYTES, isJournal, JournalWriter, parseJournal, syncFolder, writeJournalFile } from "./taskJournal.js";
import { readPage } from "./taskListing.js";

export interface JournalTaskStoreOptions {
  /** The journal file (config store.path); its folder is created if missing. */
  path: string;
  /** A write not on disk within this long rejects instead of waiting on (default 5 s; config store.commandTimeoutMs, which
   *  the error names). */
  writeTimeoutMs?: number;
  /** How often expired records are dropped from memory (default 60 s). */
  sweepIntervalMs?: number;
  /** No compaction while the file is smaller than this (default 1 MiB). */
  minRewriteBytes?: number;
}

/** A write of a record that is not on disk yet. */
interface InFlight {
  json: string;
  landed: Promise<void>;
}

export async function openJournalTaskStore(options: JournalTaskStoreOptions): Promise<TaskStore> {
  const file = path.resolve(options.path);
  const label = `task store (file ${file})`;
  await mkdir(path.dirname(file), { recursive: true });
  const lock = await acquireStoreLock(file);
  try {
    const table = new RecordTable();
    const fileBytes = await load(file, table);
    const books = new BookTable(await loadPushBooks(pushBookFileOf(file)));
    const writer = await JournalWriter.open({
      file,
      label,
      fileBytes,
      live: () => table.live(Date.now()),
      liveBytes: () => table.liveBytes,
      ...(options.minRewriteBytes !== undefined ? { minRewriteBytes: options.minRewriteBytes } : {}),
    });
    return new JournalTaskStore(label, { table, books, file }, writer, lock, options);
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/** Fills `table` from the file (creating, importing or compacting it as needed); returns the file's size. */
async function load(file: string, table: RecordTable): Promise<number> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    return writeJournalFile(file, []);
  }
  const text = bytes.toString("utf8");
  if (text === "") return writeJournalFile(file, []);
  if (isJournal(text)) {
    const { lines, tornTail } = parseJournal(file, text);
    for (const { record, json } of lines) table.put(record.taskId, json, factsOf(record));
    table.sweep(Date.now(), Infinity);
    const clean = !tornTail && bytes.length === HEADER_BYTES + table.liveBytes;
    return clean ? bytes.length : writeJournalFile(file, table.live(Date.now()));
  }
  const old = recordsFromKeyvFile(file, text);
  if (old === undefined) {
    throw new Error(
      `task store file ${file} is not a taskgate task journal (it starts with ${JSON.stringify(text.slice(0, 40))}); ` +
        `refusing to start. Point store.path at another file, or move this one away to start with an empty store.`,
    );
  }
  const backup = `${file}.keyv-file-backup`;
  await copyFile(file, backup);
  const handle = await open(backup, "r+");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await syncFolder(backup);
  for (const record of old) table.put(record.taskId, JSON.stringify(record), factsOf(record));
  table.sweep(Date.now(), Infinity);
  return writeJournalFile(file, table.live(Date.now()));
}

class JournalTaskStore implements TaskStore {
  /** The latest write of each record whose line is not on disk yet. */
  private readonly inFlight = new Map<string, InFlight>();
  private readonly gate: OperationGate;
  private readonly stopSweeper: () => void;
  private readonly writeTimeoutMs: number;
  private readonly table: RecordTable;
  readonly push: PushBooks;

  constructor(
    private readonly label: string,
    held: { table: RecordTable; books: BookTable; file: string },
    private readonly writer: JournalWriter,
    private readonly lock: StoreLock,
    options: JournalTaskStoreOptions,
  ) {
    this.table = held.table;
    this.gate = new OperationGate(label);
    const bookFile = pushBookFileOf(held.file);
    // A rewrite that timed out still runs: the next one waits for it, so two never share the temporary file.
    let rewriting: Promise<void> = Promise.resolve();
    const persist = (_owner: string, _next: string | undefined, after: () => ReadonlyMap<string, string>) => {
      const table = after();
      const rewrite = rewriting.then(() => writePushBooks(bookFile, table));
      rewriting = rewrite.catch(() => undefined);
      return this.limited(rewrite);
    };
    this.push = new PushBooks(label, held.books.slots(persist), (operation) => this.gate.run(operation));
    this.stopSweeper = startSweeper(this.table, options.sweepIntervalMs ?? 60_000);
    this.writeTimeoutMs = options.writeTimeoutMs ?? 5_000;
  }

  create(record: TaskRecord): Promise<void> {
    return this.gate.run(async () => {
      assertStorable(record);
      const id = record.taskId;
      if (this.inFlight.has(id) || this.table.json(id, Date.now()) !== undefined) throw new Error(`task ${id} already exists`);
      await this.write(record, JSON.stringify(record));
    });
  }

  get(taskId: string): Promise<TaskRecord | undefined> {
    return this.gate.run(async () => {
      const json = this.table.json(taskId, Date.now());
      return json === undefined ? undefined : (JSON.parse(json) as TaskRecord);
    });
  }

  update(taskId: string, mutate: Mutate): Promise<TaskRecord | undefined> {
    return this.gate.run(async () => {
      const now = Date.now();
      const pending = this.inFlight.get(taskId);
      const base = pending?.json ?? this.table.json(taskId, now);
      if (base === undefined) return undefined;
      const current = liveRecord(base, now);
      if (current === undefined) return undefined;
      const next = nextRecord(current, mutate);
      if (next === undefined) {
        // No change; the state returned must be on disk too.
        if (pending) await this.limited(pending.landed);
        return JSON.parse(base) as TaskRecord;
      }
      await this.write(next, JSON.stringify(next));
      return next;
    });
  }

  listUnfinished(): Promise<TaskRecord[]> {
    return this.gate.run(async () => this.table.unfinished(Date.now()).map((json) => JSON.parse(json) as TaskRecord));
  }

  /** Lists what is on disk (the table), like get(). */
  listByOwner(ownerHash: string, query: TaskListQuery): Promise<TaskPage> {
    return this.gate.run(() => readPage(query, (below, count) => this.table.listBelow(ownerHash, below, count, Date.now())));
  }

  listAll(query: TaskListQuery): Promise<TaskPage> {
    return this.gate.run(() => readPage(query, (below, count) => this.table.listBelow(undefined, below, count, Date.now())));
  }

  close(): Promise<void> {
    return this.gate.close(async () => {
      this.stopSweeper();
      try {
        // Writes still queued (one that timed out, say) get the write limit again, and closing the file at least 1 s.
        const closeMs = Math.max(this.writeTimeoutMs, 1_000);
        await limit(this.writer.close(), closeMs, () => `${this.label} could not finish its writes within ${closeMs} ms of close()`);
      } finally {
        await this.lock.release();
      }
    });
  }

  /** Appends the record's line; the table (what reads see) takes it once it is on disk. */
  private write(record: TaskRecord, json: string): Promise<void> {
    const id = record.taskId;
    const facts = factsOf(record);
    const landed = this.writer.append(json, () => {
      this.table.put(id, json, facts);
      if (this.inFlight.get(id)?.json === json) this.inFlight.delete(id);
    });
    this.inFlight.set(id, { json, landed });
    return this.limited(landed);
  }

  private limited(landed: Promise<void>): Promise<void> {
    return limit(
      landed,
      this.writeTimeoutMs,
      () =>
        `${this.label} did not finish a write within ${this.writeTimeoutMs} ms ` +
        "(store.commandTimeoutMs; the disk is slow or stuck, the write may still land)",
    );
  }
}
