// What a notification says (the webhook body and the push payload): the event (input_required,
// completed, failed), the task id, status, statusMessage, the question's message while it waits,
// tool, backend, a console link and the time. Never an answer, an argument value, a result or a
// secret. A transition notifies when the status changed to one of those three; cancelled does not.
// `approval_requested` (for the approvers, not the owner) is the write that put a new approval on
// a task: its id, tool, backend, caller, expiry and a console link to it; never the arguments (not
// even when audit.arguments shows them to approvers in the console), nor their digest.

import type { JsonObject } from "../protocol/wire.js";
import type { StoredApproval, TaskRecord } from "../tasks/taskRecord.js";

export const NOTIFY_EVENTS = ["input_required", "completed", "failed"] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];
export const APPROVAL_REQUESTED = "approval_requested";

/** The approval this change asked for, if it put a new one (undecided) on the task (`approvalIdBefore`: the one it had). */
export function approvalRequested(record: TaskRecord, approvalIdBefore: string | undefined): StoredApproval | undefined {
  const approval = record.approval;
  if (!approval || approval.decision || approvalIdBefore === approval.approvalId) return undefined;
  return approval;
}

/** The console's address: inventory.publicUrl or this instance's own URL, then `/console#/<route>`. */
const consoleLink = (baseUrl: string, route: string) => `${baseUrl.replace(/\/+$/, "")}/console#/${route}`;

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
    consoleUrl: consoleLink(baseUrl, `tasks/${encodeURIComponent(record.taskId)}`),
    at: record.lastUpdatedAt,
  };
}

export function approvalNotificationOf(record: TaskRecord, approval: StoredApproval, baseUrl: string): JsonObject {
  return {
    event: APPROVAL_REQUESTED,
    approvalId: approval.approvalId,
    taskId: record.taskId,
    tool: approval.tool,
    ...(approval.backend !== undefined ? { backend: approval.backend } : {}),
    caller: approval.caller,
    approver: approval.approverText,
    requestedAt: approval.requestedAt,
    expiresAt: approval.expiresAt,
    consoleUrl: consoleLink(baseUrl, `approvals/${encodeURIComponent(approval.approvalId)}`),
    at: record.lastUpdatedAt,
  };
}
