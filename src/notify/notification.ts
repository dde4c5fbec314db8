// What a notification says (the webhook body and the push payload): the event (input_required,
// completed, failed), the task id, status, statusMessage, the question's message while it waits,
// tool, backend, a console link and the time. Never an answer, an argument value, a result or a
// secret. A transition notifies when the status changed to one of those three; cancelled does not.

import type { JsonObject } from "../protocol/wire.js";
import type { TaskRecord } from "../tasks/taskRecord.js";

export const NOTIFY_EVENTS = ["input_required", "completed", "failed"] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

/** The event this change is, if it is one to notify. */
export function eventOf(record: TaskRecord, before: TaskRecord["status"]): NotifyEvent | undefined {
  if (record.status === before) return undefined;
  return (NOTIFY_EVENTS as readonly string[]).includes(record.status) ? (record.status as NotifyEvent) : undefined;
}

/** The message of the first open question (elicitation's `message`), shortened. */
function questionMessage(record: TaskRecord): string | undefined {
  for (const request of Object.values(record.inputRequests ?? {})) {
    const message = (request.params as { message?: unknown }).message;
    if (typeof message === "string") return message.slice(0, 300);
  }
  return undefined;
}

export function notificationOf(record: TaskRecord, event: NotifyEvent, baseUrl: string): JsonObject {
  const message = event === "input_required" ? questionMessage(record) : undefined;
  return {
    event,
    taskId: record.taskId,
    status: record.status,
    ...(record.statusMessage !== undefined ? { statusMessage: record.statusMessage.slice(0, 500) } : {}),
    ...(message !== undefined ? { message } : {}),
    tool: record.tool,
    ...(record.backend !== undefined ? { backend: record.backend } : {}),
    consoleUrl: `${baseUrl.replace(/\/+$/, "")}/console#/tasks/${encodeURIComponent(record.taskId)}`,
    at: record.lastUpdatedAt,
  };
}
