// Task-flow helpers shared by the task e2e tests: tools/call that must come back as a task,
// tasks/get|update|cancel whose results are shape-checked (taskShapes.ts), polling until a status,
// and waiting for an event of the example legacy server. All over real HTTP via mcpClient.ts.

import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/wire.js";
import { errorOf, type RpcReply, resultOf, rpc, TASKS_CAPS } from "./mcpClient.js";
import { assertCancelAck, assertCreateTaskResult, assertGetTaskResult, assertUpdateAck } from "./taskShapes.js";

/** Declares the tasks extension and form elicitation (so upstream tools may ask). */
export const TASKS_AND_FORMS = { ...TASKS_CAPS, elicitation: {} };

export interface Who {
  token?: string;
  capabilities?: JsonObject;
}

export function callTool(url: string, name: string, args: JsonObject = {}, who: Who = {}, params: JsonObject = {}): Promise<RpcReply> {
  return rpc(
    url,
    "tools/call",
    { name, arguments: args, ...params },
    { capabilities: who.capabilities ?? TASKS_AND_FORMS, token: who.token ?? "alice" },
  );
}

/** tools/call that must answer with a CreateTaskResult (checked); returns it. */
export async function createTask(url: string, name: string, args: JsonObject = {}, who: Who = {}): Promise<JsonObject> {
  const reply = await callTool(url, name, args, who);
  assert.equal(reply.status, 200, JSON.stringify(reply.message));
  assert.ok(reply.message.result, `expected a result, got ${JSON.stringify(reply.message)}`);
  return assertCreateTaskResult(resultOf(reply));
}

export function taskRpc(
  url: string,
  method: string,
  params: JsonObject,
  token = "alice",
  headers?: Record<string, string | undefined>,
): Promise<RpcReply> {
  return rpc(url, method, params, { capabilities: TASKS_CAPS, token, ...(headers ? { headers } : {}) });
}

/** tasks/get that must succeed; the result is shape-checked. */
export async function getTask(url: string, taskId: string, token = "alice"): Promise<JsonObject> {
  const reply = await taskRpc(url, "tasks/get", { taskId }, token);
  assert.equal(reply.status, 200, JSON.stringify(reply.message));
  assert.ok(reply.message.result, `tasks/get failed: ${JSON.stringify(reply.message)}`);
  return assertGetTaskResult(resultOf(reply));
}

/** tasks/update that must be acknowledged (empty ack checked). */
export async function updateTask(url: string, taskId: string, inputResponses: JsonObject, token = "alice"): Promise<void> {
  const reply = await taskRpc(url, "tasks/update", { taskId, inputResponses }, token);
  assert.equal(reply.status, 200, JSON.stringify(reply.message));
  assert.ok(reply.message.result, `tasks/update failed: ${JSON.stringify(reply.message)}`);
  assertUpdateAck(resultOf(reply));
}

/** tasks/cancel that must be acknowledged (empty ack checked). */
export async function cancelTask(url: string, taskId: string, token = "alice"): Promise<void> {
  const reply = await taskRpc(url, "tasks/cancel", { taskId }, token);
  assert.equal(reply.status, 200, JSON.stringify(reply.message));
  assert.ok(reply.message.result, `tasks/cancel failed: ${JSON.stringify(reply.message)}`);
  assertCancelAck(resultOf(reply));
}

/** Polls until `done`, then shape-checks the task it stopped on. */
export async function waitForTask(
  url: string,
  taskId: string,
  done: (task: JsonObject) => boolean,
  options: { token?: string; timeoutMs?: number } = {},
): Promise<JsonObject> {
  return assertGetTaskResult(await pollTask(url, taskId, done, { timeoutMs: 5000, ...options }));
}

export const hasStatus =
  (...statuses: string[]) =>
  (task: JsonObject) =>
    statuses.includes(task.status as string);

export const TERMINAL = hasStatus("completed", "failed", "cancelled");

/** The outstanding inputRequests keys, sorted. */
export const keysOf = (task: JsonObject) => Object.keys((task.inputRequests ?? {}) as JsonObject).sort();

/** Resolves with the first `name` event matching `match` (listener attached now, before the action). */

/** Asserts a JSON-RPC error reply with this code (and HTTP status, when given); returns the error. */
export function assertRpcError(reply: RpcReply, code: number, httpStatus?: number): { code: number; message: string; data?: JsonObject } {
  const error = errorOf(reply);
  assert.ok(error, `expected error ${code}, got ${JSON.stringify(reply.message)}`);
  assert.equal(error.code, code, `expected error ${code}, got ${JSON.stringify(error)}`);
  assert.ok(!("result" in reply.message), "an error reply must not carry a result");
  if (httpStatus !== undefined) assert.equal(reply.status, httpStatus, `HTTP status for error ${code}`);
  return error;
}

/** Polls tasks/get until `done(task)` or the deadline. */
export async function pollTask(
  url: string,
  taskId: string,
  done: (task: JsonObject) => boolean,
  options: { token?: string; timeoutMs?: number } = {},
): Promise<JsonObject> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    const reply = await rpc(url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS, token: options.token ?? "alice" });
    const task = resultOf(reply);
    if (task && done(task)) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} did not reach the expected state; last: ${JSON.stringify(reply.message)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
