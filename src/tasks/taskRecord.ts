// The stored form of a task: the public Task fields plus what only the gateway needs
// (owner, tool, which instance holds the upstream call).

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
