// keyvFileImport: reads a store file written by taskgate 0.1, whose file store was keyv-file: one
// JSON document {"cache":[[key, {"value": <keyv's JSON {value: <record JSON>, expires}>, expire}], ...]}
// with task records under the keys "taskgate:task:<id>" (other keys, e.g. the old unfinished index,
// are ignored: the journal store rebuilds its index from the records). The journal store imports such
// a file once, keeping a copy of it beside (see journalTaskStore.ts).

import type { TaskRecord } from "../taskRecord.js";
import { assertStorable } from "./storedRecord.js";

const TASK_KEY = "taskgate:task:";

/** The records of a keyv-file store, or undefined if `text` is not one. Throws on a damaged entry. */
export function recordsFromKeyvFile(file: string, text: string): TaskRecord[] | undefined {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return undefined;
  }
  const cache = (document as { cache?: unknown } | null)?.cache;
  if (!Array.isArray(cache)) return undefined;
  const records: TaskRecord[] = [];
  for (const entry of cache) {
    if (!Array.isArray(entry) || typeof entry[0] !== "string") throw damaged(file, entry);
    const [key, stored] = entry as [string, unknown];
    if (!key.startsWith(TASK_KEY)) continue;
    try {
      const envelope = JSON.parse((stored as { value: string }).value) as { value: string };
      const record = JSON.parse(envelope.value) as TaskRecord;
      assertStorable(record);
      records.push(record);
    } catch (error) {
      throw damaged(file, key, error);
    }
  }
  return records;
}

function damaged(file: string, what: unknown, cause?: unknown): Error {
  const name = typeof what === "string" ? what : JSON.stringify(what)?.slice(0, 80);
  return new Error(
    `task store file ${file} is an old (keyv-file) store, but its entry ${name} is damaged; refusing to start. ` +
      `Move the file away to start with an empty store.`,
    { cause },
  );
}
