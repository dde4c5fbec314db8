// The file store's push subscriptions: "<journal>.push.json" beside the journal (under its lock),
// every book in one JSON array, replaced whole on each change (written to "<…>.tmp", fsynced,
// renamed over it, the folder fsynced), so a crash leaves the table before or after the change.
// They change rarely (a browser subscribing), so rewriting the small file is cheaper than a second
// journal.

import { open, readFile, rename } from "node:fs/promises";
import type { PushBook } from "../pushBook.js";
import { syncFolder } from "./taskJournal.js";

export const pushBookFileOf = (journal: string): string => `${journal}.push.json`;

/** The books in the file; none when it does not exist. A file that is not a list of books is refused, naming it. */
export async function loadPushBooks(file: string): Promise<PushBook[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  let books: unknown;
  try {
    books = JSON.parse(text);
  } catch {
    books = undefined;
  }
  const isBook = (book: unknown) =>
    typeof book === "object" &&
    book !== null &&
    typeof (book as PushBook).owner === "string" &&
    Array.isArray((book as PushBook).subscriptions);
  if (!Array.isArray(books) || !books.every(isBook)) {
    throw new Error(`push subscription file ${file} is not a list of push subscriptions; move it away to start without them`);
  }
  return books as PushBook[];
}

export async function writePushBooks(file: string, texts: ReadonlyMap<string, string>): Promise<void> {
  const temporary = `${file}.tmp`;
  const handle = await open(temporary, "w");
  try {
    await handle.writeFile(`[${[...texts.values()].join(",\n")}]\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, file);
  await syncFolder(file);
}
