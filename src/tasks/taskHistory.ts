// A task's timeline: every change of status appended to the record as {status, statusMessage?, at}.
// Bounded: past HISTORY_LIMIT entries the oldest go, except the first (when the task started), so a
// task that goes back and forth between working and input_required keeps a small record.

import type { TaskHistoryEntry, TaskRecord } from "./taskRecord.js";

export const HISTORY_LIMIT = 32;

function entryOf(record: TaskRecord): TaskHistoryEntry {
  return {
    status: record.status,
    ...(record.statusMessage !== undefined ? { statusMessage: record.statusMessage } : {}),
    at: record.lastUpdatedAt,
  };
}

/** The record with its first entry (at creation). */
export function startHistory(record: TaskRecord): TaskRecord {
  return { ...record, history: [entryOf(record)] };
}

/** `next` with its status appended to the history when it differs from `before`'s. */
export function withHistory(before: TaskRecord, next: TaskRecord): TaskRecord {
  if (next.status === before.status) return next;
  const history = [...(before.history ?? []), entryOf(next)];
  if (history.length > HISTORY_LIMIT) history.splice(1, history.length - HISTORY_LIMIT);
  return { ...next, history };
}
