// A stored task as taskgate keeps one for a working slow_echo (the fields of src/tasks/taskRecord.ts:
// public Task fields plus owner hash, tool, used keys, holder, version), and the DetailedTask a
// client sees of it. The floor and the v2 peer hold exactly these, so every server in the tasks/get
// comparison looks up and serialises the same thing. Kept here rather than imported from src/ so
// the instruments do not move when src/ is restructured.

import { createHash, randomBytes } from "node:crypto";

export const PROTOCOL_VERSION = "2026-07-28";
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
export const META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
export const META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";

export interface StoredTask {
  taskId: string;
  status: string;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
  ownerHash: string;
  tool: string;
  usedKeys: string[];
  holder: string;
  version: number;
}

/** What taskgate stores about an owner: sha256 of "subject:<name>". */
export const ownerHash = (subject: string) => createHash("sha256").update(`subject:${subject}`, "utf8").digest("hex");

export function workingTask(subject: string, holder: string): StoredTask {
  const now = new Date().toISOString();
  return {
    taskId: randomBytes(20).toString("base64url"),
    status: "working",
    createdAt: now,
    lastUpdatedAt: now,
    ttlMs: 3_600_000,
    pollIntervalMs: 5000,
    ownerHash: ownerHash(subject),
    tool: "slow_echo",
    usedKeys: [],
    holder,
    version: 0,
  };
}

/** The DetailedTask of a working (or other non-terminal, question-free) task, plus resultType. */
export function detailedTask(record: StoredTask): Record<string, unknown> {
  const task: Record<string, unknown> = {
    taskId: record.taskId,
    status: record.status,
    createdAt: record.createdAt,
    lastUpdatedAt: record.lastUpdatedAt,
    ttlMs: record.ttlMs,
  };
  if (record.statusMessage !== undefined) task.statusMessage = record.statusMessage;
  if (record.pollIntervalMs !== undefined) task.pollIntervalMs = record.pollIntervalMs;
  task.resultType = "complete";
  return task;
}
