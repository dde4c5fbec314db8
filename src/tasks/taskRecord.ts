// The stored form of a task: the public Task fields plus what only the gateway needs
// (owner, tool, which instance holds the upstream call).

import type { InputRequests, JsonObject, JsonRpcErrorObject, TaskStatus } from "../protocol/wire.js";

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
  tool: string;
  /** Instance id of the process holding the upstream call. */
  holder: string;
  /** Bumped by the store on every write. Followers use it to order changes; the store relies on
   *  the single-writer rule (only the holder writes a running task), see decisions/0003. */
  version: number;
}
