// What the inventory shows of a task (docs/inventory-api.md): TaskItem for its owner (status, open
// questions exactly as tasks/get shows them, times, tool, backend), the detail view (plus the
// timeline of states and, once completed, only the result's type: the result itself is fetched via
// MCP) and the operators' item (plus the owner's name, the holder instance, the age and the time
// spent waiting for input). Owner hashes, traces, results and errors never leave.

import type { JsonObject } from "../protocol/wire.js";
import type { TaskRecord } from "../tasks/taskRecord.js";

export function taskItem(record: TaskRecord): JsonObject {
  const item: JsonObject = {
    taskId: record.taskId,
    status: record.status,
    tool: record.tool,
    createdAt: record.createdAt,
    lastUpdatedAt: record.lastUpdatedAt,
  };
  if (record.statusMessage !== undefined) item.statusMessage = record.statusMessage;
  if (record.backend !== undefined) item.backend = record.backend;
  if (record.ttlMs !== null) item.ttl = record.ttlMs;
  if (record.pollIntervalMs !== undefined) item.pollInterval = record.pollIntervalMs;
  if (record.status === "input_required") item.inputRequests = (record.inputRequests ?? {}) as JsonObject;
  return item;
}

/** The owner's view of one task: the item, its timeline, and what kind of result it has. */
export function taskDetail(record: TaskRecord): JsonObject {
  const detail: JsonObject = { ...taskItem(record), history: (record.history ?? []) as unknown as JsonObject[] };
  if (record.status === "completed") detail.resultType = "complete";
  return detail;
}

/** Since when the task waits for input (the last time it entered input_required), in epoch ms. */
export function waitingSince(record: TaskRecord): number | undefined {
  if (record.status !== "input_required") return undefined;
  const entered = [...(record.history ?? [])].reverse().find((entry) => entry.status === "input_required");
  return Date.parse(entered?.at ?? record.lastUpdatedAt);
}

/** The operators' view: the item plus owner, holder, age and time in input_required. */
export function adminItem(record: TaskRecord, nowMs = Date.now()): JsonObject {
  const item: JsonObject = {
    ...taskItem(record),
    owner: record.ownerName ?? `owner#${record.ownerHash.slice(0, 12)}`,
    holder: record.holder,
    ageMs: Math.max(0, nowMs - Date.parse(record.createdAt)),
  };
  const since = waitingSince(record);
  if (since !== undefined) item.inputRequiredForMs = Math.max(0, nowMs - since);
  return item;
}
