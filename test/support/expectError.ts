// The one check of a failure reply from SPEC-upstream.md's error table: JSON-RPC code (-32603
// unless said), HTTP status, error.data.reason, and a message that names the cause.

import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/wire.js";
import type { RpcReply } from "./mcpClient.js";

export interface ExpectedError {
  reason: string;
  /** HTTP status of a JSON reply (an SSE reply is 200 with the error as its final frame). */
  http: number;
  message: RegExp;
  code?: number;
}

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: JsonObject;
}

/** Checks a JSON-RPC error object (a reply's, an SSE frame's, or a failed task's). */
export function assertErrorObject(error: unknown, expected: Omit<ExpectedError, "http">, where: string): RpcErrorObject {
  assert.ok(error && typeof error === "object", `${where}: expected a JSON-RPC error, got ${JSON.stringify(error)}`);
  const e = error as RpcErrorObject;
  assert.equal(e.code, expected.code ?? -32603, `${where}: error code; error was ${JSON.stringify(e)}`);
  assert.equal(e.data?.reason, expected.reason, `${where}: error.data.reason; error was ${JSON.stringify(e)}`);
  assert.match(e.message, expected.message, `${where}: error message`);
  return e;
}

/** Checks a reply that must be this error, as JSON with its HTTP status. */
export function assertErrorReply(reply: RpcReply, expected: ExpectedError, where: string): RpcErrorObject {
  assert.ok(
    reply.message.error,
    `${where}: expected error ${expected.reason} (HTTP ${expected.http}), got HTTP ${reply.status} ${JSON.stringify(reply.message).slice(0, 500)}`,
  );
  const error = assertErrorObject(reply.message.error, expected, where);
  assert.equal(reply.status, expected.http, `${where}: HTTP status for ${expected.reason}`);
  assert.ok(reply.contentType.includes("application/json"), `${where}: a ${expected.http} error is a JSON body, got ${reply.contentType}`);
  return error;
}

/** Checks a reply that ends in this error: a JSON reply with its HTTP status, or an SSE stream (HTTP 200) whose final frame is it. */
export function assertErrorEnding(reply: RpcReply, expected: ExpectedError, where: string): RpcErrorObject {
  if (reply.contentType.includes("text/event-stream")) {
    assert.equal(reply.status, 200, `${where}: an SSE reply is HTTP 200`);
    assert.ok(
      reply.message.error,
      `${where}: the stream's final message must be an error; frames: ${JSON.stringify(reply.events).slice(0, 500)}`,
    );
    return assertErrorObject(reply.message.error, expected, `${where} (SSE frame)`);
  }
  return assertErrorReply(reply, expected, where);
}
