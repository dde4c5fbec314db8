// The stored form of a task: the public Task fields plus what only the gateway needs
// (owner, tool, which instance holds the upstream call).

import type { Role } from "../config/accessOptions.js";
import type { InputRequests, JsonObject, JsonRpcErrorObject, TaskStatus } from "../protocol/wire.js";

/** One state a task went through (the inventory's timeline). */
export interface TaskHistoryEntry {
  status: TaskStatus;
  statusMessage?: string;
  at: string;
}

export interface TaskRecord {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** Milliseconds from createdAt; null = unlimited. */
  ttlMs: number | null;
  pollIntervalMs?: number;
  /** Outstanding questions, present only while status is input_required. */
  inputRequests?: InputRequests;
  result?: JsonObject;
  error?: JsonRpcErrorObject;

  /** sha256 of the owning subject; never the subject or token itself. */
  ownerHash: string;
  /** How operators see the owner (the subject; in auth mode demo, where the subject is the token, a hash of it). */
  ownerName?: string | undefined;
  /** The states the task went through, oldest first, bounded (tasks/taskHistory.ts). */
  history?: TaskHistoryEntry[] | undefined;
  tool: string;
  /** The backend that ran the task (a listing filter); absent for the single upstream. */
  backend?: string | undefined;
  /** The MCP path that created the task (a fleet's /mcp/<name> or its federated endpoint): the only
   *  endpoint it answers on. Absent for the single upstream. */
  endpoint?: string | undefined;
  /** A call waiting for (or past) someone else's approval (access/approvals.ts); never shown to the caller. */
  approval?: StoredApproval | undefined;
  /**
   * When a client's tasks/cancel was recorded while the task ran. From then on the task ends
   * `cancelled` or `completed`, never `failed`: a failure written later (the call's, a holder gone,
   * an operator's, a shutdown) is written as `cancelled` (decision 0028).
   */
  cancelRequestedAt?: string | undefined;
  /** Instance id of the process holding the upstream call. */
  holder: string;
  /** The trace of the request that created the task (W3C keys), continued by each phase's span. */
  trace?: Record<string, string>;
  /**
   * Set by the store on every write to the stored version + 1. The redis store writes only if the
   * record is still what its update read (compare-and-set), so a write by another instance in between
   * is never lost: mutate runs again on the newer record (see taskStore.ts).
   */
  version: number;
}

/** An approval a role must give before the task's call is sent upstream, bound to that exact call. */
export interface StoredApproval {
  /** `<taskId>.<256 random bits>`: what approvers name in POST /approvals/{approvalId}. */
  approvalId: string;
  /** The caller as approvers are shown it (its subject; in demo mode a hash). */
  caller: string;
  callerHash: string;
  backend?: string | undefined;
  tool: string;
  argumentsDigest: string;
  /** The arguments, only when audit.arguments shows them. */
  arguments?: unknown;
  /** Which approvals entry asked for it ("approvals[0]"). */
  rule: string;
  /** Who may decide, as configured when it was asked (a reload does not change a pending approval). */
  approver: Role;
  approverText: string;
  requestedAt: string;
  expiresAt: string;
  decision?: { decision: "approve" | "deny" | "expired"; by?: string; reason?: string; at: string };
}
