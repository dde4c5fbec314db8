// The stored form of a task: the public Task fields plus what only the gateway needs
// (owner, tool, used input keys, which instance holds the upstream call).

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
  /** Every input key ever issued for this task, so none is reused. */
  usedKeys: string[];
  /** Instance id of the process holding the upstream call. */
  holder: string;
  /** Bumped on every write; lets stores detect lost updates. */
  version: number;
}
