// What a client sees of a task: the DetailedTask shape of the tasks extension, built from the
// stored record (owner, holder and other gateway-only fields never leave).

import { internalError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/wire.js";
import type { TaskRecord } from "./taskRecord.js";

export function detailedTask(record: TaskRecord): JsonObject {
  const task: JsonObject = {
    taskId: record.taskId,
    status: record.status,
    createdAt: record.createdAt,
    lastUpdatedAt: record.lastUpdatedAt,
    ttlMs: record.ttlMs,
  };
  if (record.statusMessage !== undefined) task.statusMessage = record.statusMessage;
  if (record.pollIntervalMs !== undefined) task.pollIntervalMs = record.pollIntervalMs;
  if (record.status === "input_required") task.inputRequests = record.inputRequests ?? {};
  if (record.status === "completed") task.result = record.result ?? { content: [] };
  if (record.status === "failed") task.error = record.error ?? internalError("Task failed").toJSON();
  return task;
}

/** The bare Task fields, as CreateTaskResult carries them (no result, error or inputRequests). */
export function taskHandle(record: TaskRecord): JsonObject {
  const { inputRequests: _i, result: _r, error: _e, ...task } = detailedTask(record);
  return task;
}
