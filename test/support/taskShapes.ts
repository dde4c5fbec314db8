// Shape checks for every task-related result the e2e tests receive: first the zod schemas of
// @modelcontextprotocol/ext-tasks (core/v2), then the conformance suite's stricter rules from
// /work/shared/spec/tasks-extension.md (no legacy keys, positive integer ttlMs/pollIntervalMs,
// ISO timestamps, per-status key sets, acks that are only `resultType`). Each helper throws an
// AssertionError naming the broken rule and returns the value typed as a plain object.

import assert from "node:assert/strict";
import {
  CancelTaskResultV2Schema,
  CreateTaskResultV2Schema,
  GetTaskResultV2Schema,
  UpdateTaskResultV2Schema,
} from "@modelcontextprotocol/ext-tasks/core/v2";
import type { JsonObject } from "../../src/protocol/wire.js";

type Schema = { safeParse(value: unknown): { success: boolean; error?: unknown } };

function parse(schema: Schema, value: unknown, what: string): void {
  const parsed = schema.safeParse(value);
  assert.ok(parsed.success, `${what} does not match the ext-tasks v2 schema: ${String(parsed.error)}\n${JSON.stringify(value)}`);
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/;
/** Keys the legacy 2025-11-25 shapes used; never on a CreateTaskResult or tasks/get result. */
const LEGACY_KEYS = ["ttl", "pollInterval", "task", "requestState"];
const TASK_KEYS = ["taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs", "resultType", "_meta"];
const EXTRA_KEYS_BY_STATUS: Record<string, string[]> = {
  working: [],
  input_required: ["inputRequests"],
  completed: ["result"],
  failed: ["error"],
  cancelled: [],
};

function assertTaskFields(task: JsonObject, what: string): void {
  assert.equal(typeof task.taskId, "string", `${what}: taskId must be a string`);
  assert.ok((task.taskId as string).length > 0, `${what}: taskId must not be empty`);
  assert.ok(Object.hasOwn(task, "ttlMs"), `${what}: ttlMs is a required key (null = unlimited)`);
  assert.ok(
    task.ttlMs === null || (Number.isSafeInteger(task.ttlMs) && (task.ttlMs as number) > 0),
    `${what}: ttlMs must be null or a positive integer, got ${JSON.stringify(task.ttlMs)}`,
  );
  if (Object.hasOwn(task, "pollIntervalMs")) {
    assert.ok(
      Number.isSafeInteger(task.pollIntervalMs) && (task.pollIntervalMs as number) > 0,
      `${what}: pollIntervalMs must be a positive integer, got ${JSON.stringify(task.pollIntervalMs)}`,
    );
  }
  for (const key of ["createdAt", "lastUpdatedAt"]) {
    assert.match(String(task[key]), TIMESTAMP, `${what}: ${key} must start with YYYY-MM-DDThh:mm:ss`);
    assert.ok(!Number.isNaN(Date.parse(String(task[key]))), `${what}: ${key} must be a parseable ISO 8601 date`);
  }
  assert.ok(Date.parse(String(task.lastUpdatedAt)) >= Date.parse(String(task.createdAt)), `${what}: lastUpdatedAt before createdAt`);
  for (const key of LEGACY_KEYS) assert.ok(!Object.hasOwn(task, key), `${what}: legacy key '${key}' must not appear`);
}

/** A tools/call result that is a CreateTaskResult (flat Task + resultType "task"). */
export function assertCreateTaskResult(value: unknown): JsonObject {
  parse(CreateTaskResultV2Schema, value, "CreateTaskResult");
  const task = value as JsonObject;
  assert.equal(task.resultType, "task");
  assertTaskFields(task, "CreateTaskResult");
  for (const key of ["result", "error", "inputRequests", "requestState", "task"]) {
    assert.ok(!Object.hasOwn(task, key), `CreateTaskResult must not carry '${key}'`);
  }
  for (const key of Object.keys(task)) assert.ok(TASK_KEYS.includes(key), `CreateTaskResult has an unexpected key '${key}'`);
  return task;
}

/** A tasks/get result: DetailedTask + resultType "complete", with exactly the keys its status allows. */
export function assertGetTaskResult(value: unknown): JsonObject {
  parse(GetTaskResultV2Schema, value, "tasks/get result");
  const task = value as JsonObject;
  assert.equal(task.resultType, "complete", "tasks/get results carry resultType 'complete' (never 'task')");
  assertTaskFields(task, `tasks/get (${String(task.status)})`);
  const extra = EXTRA_KEYS_BY_STATUS[task.status as string];
  assert.ok(extra, `unknown status ${String(task.status)}`);
  for (const key of Object.keys(task)) {
    assert.ok(TASK_KEYS.includes(key) || extra.includes(key), `tasks/get (${String(task.status)}) has an unexpected key '${key}'`);
  }
  for (const key of extra) assert.ok(Object.hasOwn(task, key), `tasks/get (${String(task.status)}) must include '${key}'`);
  if (task.status === "completed") {
    const result = task.result as JsonObject;
    const meta = result._meta as JsonObject | undefined;
    assert.ok(
      !meta || !Object.hasOwn(meta, "io.modelcontextprotocol/related-task"),
      "inlined result must not carry the related-task _meta",
    );
  }
  return task;
}

function assertAck(schema: Schema, value: unknown, what: string): JsonObject {
  parse(schema, value, what);
  const ack = value as JsonObject;
  assert.deepEqual(ack, { resultType: "complete" }, `${what} must be the empty ack {resultType:"complete"}`);
  return ack;
}

/** A tasks/update result: exactly `{resultType:"complete"}`. */
export const assertUpdateAck = (value: unknown) => assertAck(UpdateTaskResultV2Schema, value, "tasks/update ack");

/** A tasks/cancel result: exactly `{resultType:"complete"}`. */
export const assertCancelAck = (value: unknown) => assertAck(CancelTaskResultV2Schema, value, "tasks/cancel ack");

/** An ordinary (inline) tools/call result: resultType "complete", content present, never a task. */
export function assertInlineToolResult(value: unknown): JsonObject {
  const result = value as JsonObject;
  assert.ok(result && typeof result === "object", `expected a result object, got ${JSON.stringify(value)}`);
  assert.equal(result.resultType, "complete", `inline result must have resultType 'complete': ${JSON.stringify(value)}`);
  assert.ok(Array.isArray(result.content), "inline tool result must carry content");
  assert.ok(!Object.hasOwn(result, "taskId"), "inline result must not be a task");
  return result;
}

/** The text of a CallToolResult's text blocks, joined. */
export function textOf(result: unknown): string {
  const content = ((result as JsonObject | undefined)?.content ?? []) as Array<{ type: string; text?: string }>;
  return content.map((c) => (c.type === "text" ? (c.text ?? "") : "")).join("");
}
