// 2026-07-28 requests to a taskgate for the real-server tests, each with a time limit (a gateway
// that never answers fails the test with the method and the limit instead of hanging it), plus
// the checks every round of an inline MRTR conversation or a task creation needs.

import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/wire.js";
import { type RpcOptions, type RpcReply, resultOf, rpc } from "./mcpClient.js";
import { recentLogOf } from "./recentLog.js";
import { assertCreateTaskResult, textOf } from "./taskShapes.js";

export { TASKS_AND_FORMS } from "./tasks.js";
export { textOf };

/** Time limit of one request/reply (REAL_SERVER_CALL_TIMEOUT_MS). */
export const CALL_TIMEOUT_MS = Number(process.env.REAL_SERVER_CALL_TIMEOUT_MS ?? 20_000);

export const FORMS = { elicitation: {} };

export interface CallOptions extends Omit<RpcOptions, "signal"> {
  /** Aborts the request (e.g. a client that leaves); the time limit applies as well. */
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** mcpClient.rpc with a time limit; the error names the method and the limit, with the gateway's last log lines. */
export async function call(url: string, method: string, params: JsonObject = {}, options: CallOptions = {}): Promise<RpcReply> {
  const timeoutMs = options.timeoutMs ?? CALL_TIMEOUT_MS;
  const limit = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, limit]) : limit;
  try {
    return await rpc(url, method, params, { ...options, signal });
  } catch (error) {
    if (limit.aborted)
      throw new Error(
        `taskgate gave no complete reply to ${method} ${JSON.stringify(params.name ?? "")} within ${timeoutMs} ms${recentLogOf(url)}`,
      );
    throw error;
  }
}

/** tools/call as `token` with these client capabilities (and extra params: requestState, inputResponses, _meta). */
export function callTool(
  url: string,
  name: string,
  args: JsonObject,
  who: { token: string; capabilities: JsonObject },
  extra: CallOptions & { params?: JsonObject } = {},
): Promise<RpcReply> {
  const { params, ...options } = extra;
  return call(url, "tools/call", { name, arguments: args, ...params }, { ...options, token: who.token, capabilities: who.capabilities });
}

export interface Round {
  inputRequests: Record<string, { method: string; params: JsonObject }>;
  requestState: string;
  /** The only key (asserted). */
  key: string;
}

/** Asserts an inline MRTR input_required result with exactly one question (and no task). */
export function expectInputRequired(reply: RpcReply): Round {
  assert.equal(reply.status, 200, JSON.stringify(reply.message));
  const result = resultOf(reply);
  assert.ok(result, `expected an input_required result, got ${JSON.stringify(reply.message)}`);
  assert.equal(result.resultType, "input_required", `expected input_required, got ${JSON.stringify(result)}`);
  assert.equal("taskId" in result, false, "an inline question round carries no taskId");
  assert.equal(typeof result.requestState, "string", "input_required carries a requestState");
  const inputRequests = result.inputRequests as Round["inputRequests"];
  const keys = Object.keys(inputRequests ?? {});
  assert.equal(keys.length, 1, `expected one input request, got ${JSON.stringify(inputRequests)}`);
  return { inputRequests, requestState: result.requestState as string, key: keys[0]! };
}

/** Asserts a complete tool result and returns it. */
export function expectComplete(reply: RpcReply): JsonObject {
  assert.equal(reply.status, 200, JSON.stringify(reply.message));
  const result = resultOf(reply);
  assert.ok(result, `expected a result, got ${JSON.stringify(reply.message)}`);
  assert.equal(result.resultType, "complete", `expected a complete result, got ${JSON.stringify(result)}`);
  return result;
}

/** Asserts a CreateTaskResult (shape-checked) and returns it. */
export function expectTask(reply: RpcReply): JsonObject {
  assert.equal(reply.status, 200, JSON.stringify(reply.message));
  const result = resultOf(reply);
  assert.ok(result, `expected a CreateTaskResult, got ${JSON.stringify(reply.message)}`);
  assert.equal(result.resultType, "task", `expected resultType task, got ${JSON.stringify(result)}`);
  return assertCreateTaskResult(result);
}

/** The JSON-RPC error of a reply (asserted present). */
export function expectError(reply: RpcReply, code: number): { code: number; message: string; data?: JsonObject } {
  const error = reply.message.error as { code: number; message: string; data?: JsonObject } | undefined;
  assert.ok(error, `expected JSON-RPC error ${code}, got ${JSON.stringify(reply.message)}`);
  assert.equal(error.code, code, `expected error ${code}, got ${JSON.stringify(error)}`);
  return error;
}

export const accept = (content: JsonObject) => ({ action: "accept", content });
