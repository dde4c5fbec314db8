// taskJournal: the durable store's file format and its writer.
//
// Format: JSON lines. Line 1 is the header {"taskgateJournal":1}; every further line is one task
// record's JSON, the record's state from that line on (the last line of a taskId wins). Nothing is
// ever changed in place: a write appends a line, and a rewrite (compaction) writes the live records
// to "<file>.rewrite", fsyncs it, renames it over the file and fsyncs the folder, so a crash at any
// moment leaves either the old or the new file, whole.
//
// parseJournal reads a file: a last line without its line break (a write torn by a crash before it
// was acknowledged) is tolerated; a damaged line anywhere else is an error naming the file and line.
//
// JournalWriter appends: every line handed to append() is written and fdatasync'ed before its promise
// resolves (and its onDurable runs, synchronously, first). Lines arriving while a write is in flight
// go out together in the next write with one fdatasync (group commit), so the cost per write does
// not grow with the file. After a write, if the file has grown past twice the live data (and past
// minRewriteBytes), it is rewritten before the next write. A failed write or fsync leaves the
// writer failed: that append and every later one reject with the cause (after a failed fsync the
// kernel's view of the file cannot be trusted; a restart reloads what is on disk).

import { type FileHandle, open, rename } from "node:fs/promises";
import path from "node:path";
import type { TaskRecord } from "../taskRecord.js";
import { assertStorable } from "./storedRecord.js";

export const JOURNAL_HEADER = JSON.stringify({ taskgateJournal: 1 });
export const HEADER_BYTES = Buffer.byteLength(JOURNAL_HEADER) + 1;
/** Rewrites are written in pieces of about this size. */
const CHUNK_BYTES = 1 << 20;

export interface ParsedJournal {
  /** Each record line as stored, in file order (a taskId may appear several times; the last wins). */
  lines: Array<{ record: TaskRecord; json: string }>;
  /** The file ended in a line without its line break (dropped if it did not parse). */
  tornTail: boolean;
}

/** True if `text` starts with the journal header line. */
export function isJournal(text: string): boolean {
  return text.startsWith(JOURNAL_HEADER + "\n") || text === JOURNAL_HEADER;
}

export function parseJournal(file: string, text: string): ParsedJournal {
  const parts = text.split("\n");
  const complete = text.endsWith("\n");
  const last = parts.length - 1; // text ends with "\n" → parts[last] === ""
  const lines: ParsedJournal["lines"] = [];
  const tornTail = !complete; // the last line lacks its break: cut short, or whole but never acknowledged
  for (let i = 1; i < parts.length; i++) {
    const json = parts[i]!;
    if (i === last && complete) break;
    let record: TaskRecord;
    try {
      record = JSON.parse(json) as TaskRecord;
      if (record === null || typeof record !== "object" || typeof record.status !== "string") throw new Error("not a task record");
      assertStorable(record);
    } catch (error) {
      if (i === last) break; // torn tail: a write the crash cut short, never acknowledged
      throw new Error(
        `task store file ${file}: line ${i + 1} is damaged (${(error as Error).message}); refusing to start. ` +
          `Repair or remove that line, or move the file away to start with an empty store.`,
        { cause: error },
      );
    }
    lines.push({ record, json });
  }
  return { lines, tornTail };
}

/** Writes a complete journal (header + `lines`) over `file` atomically; returns its size in bytes. */
export async function writeJournalFile(file: string, lines: Iterable<string>): Promise<number> {
  const draft = `${file}.rewrite`;
  const handle = await open(draft, "w");
  let bytes = 0;
  try {
    let pending: string[] = [JOURNAL_HEADER];
    let pendingLength = JOURNAL_HEADER.length;
    const flush = async () => {
      const buffer = Buffer.from(pending.join("\n") + "\n");
      await writeAll(handle, buffer);
      bytes += buffer.length;
      pending = [];
      pendingLength = 0;
    };
    for (const line of lines) {
      pending.push(line);
      pendingLength += line.length + 1;
      if (pendingLength >= CHUNK_BYTES) await flush();
    }
    if (pending.length > 0) await flush();
    await handle.datasync();
  } finally {
    await handle.close();
  }
  await rename(draft, file);
  await syncFolder(file);
  return bytes;
}

/** fsync of the folder holding `file`, so a rename or a new file survives a crash. */
export async function syncFolder(file: string): Promise<void> {
  const folder = await open(path.dirname(file), "r");
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

async function writeAll(handle: FileHandle, buffer: Buffer): Promise<void> {
  let offset = 0;
  while (offset < buffer.length) {
    const { bytesWritten } = await handle.write(buffer, offset, buffer.length - offset);
    offset += bytesWritten;
  }
}

export interface JournalWriterOptions {
  file: string;
  /** Names the store in errors, e.g. "task store (file /data/tasks.json)". */
  label: string;
  /** Size of the file as it is now. */
  fileBytes: number;
  /** The live records' JSON lines, for a rewrite. Called when every appended line is durable and applied. */
  live: () => Iterable<string>;
  /** Bytes the live records take in the file (their JSON plus line breaks). */
  liveBytes: () => number;
  /** No rewrite while the file is smaller than this (default 1 MiB). */
  minRewriteBytes?: number;
}

interface Entry {
  line: string;
  onDurable: () => void;
  resolve: () => void;
  reject: (error: Error) => void;
}

export class JournalWriter {
  private queue: Entry[] = [];
  private running: Promise<void> | undefined;
  private failure: Error | undefined;
  private fileBytes: number;
  private readonly minRewriteBytes: number;

  private constructor(
    private handle: FileHandle,
    private readonly options: JournalWriterOptions,
  ) {
    this.fileBytes = options.fileBytes;
    this.minRewriteBytes = options.minRewriteBytes ?? 1 << 20;
  }

  static async open(options: JournalWriterOptions): Promise<JournalWriter> {
    return new JournalWriter(await open(options.file, "a"), options);
  }

  /** Why the writer stopped, if it did. */
  get failed(): Error | undefined {
    return this.failure;
  }

  /** Appends `line` (no line break inside); resolves once it is on disk, after running onDurable. */
  append(line: string, onDurable: () => void): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ line, onDurable, resolve, reject });
      this.running ??= this.drain().finally(() => {
        this.running = undefined;
      });
    });
  }

  /** Waits for queued lines, then closes the file. */
  async close(): Promise<void> {
    while (this.running) await this.running;
    await this.handle.close();
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        const buffer = Buffer.from(batch.map((entry) => entry.line + "\n").join(""));
        await writeAll(this.handle, buffer);
        await this.handle.datasync();
        this.fileBytes += buffer.length;
      } catch (error) {
        this.fail(error, batch);
        return;
      }
      for (const entry of batch) {
        entry.onDurable();
        entry.resolve();
      }
      if (this.fileBytes > this.minRewriteBytes && this.fileBytes > 2 * (HEADER_BYTES + this.options.liveBytes())) {
        try {
          await this.rewrite();
        } catch (error) {
          this.fail(error, []);
          return;
        }
      }
    }
  }

  /** Compaction: the file becomes the header plus the live records; appends wait meanwhile. */
  private async rewrite(): Promise<void> {
    const bytes = await writeJournalFile(this.options.file, this.options.live());
    const old = this.handle;
    this.handle = await open(this.options.file, "a");
    this.fileBytes = bytes;
    await old.close();
  }

  private fail(cause: unknown, batch: Entry[]): void {
    const reason = cause instanceof Error ? cause.message : String(cause);
    this.failure = new Error(
      `${this.options.label} cannot write (${reason}); it accepts no more writes until taskgate restarts ` +
        `(every acknowledged write is in the file)`,
      { cause },
    );
    for (const entry of [...batch, ...this.queue]) entry.reject(this.failure);
    this.queue = [];
  }
}
