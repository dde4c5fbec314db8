// Request ids end to end (issue 12): the id a request is known by — its X-Request-Id, a W3C
// traceparent's trace id, or one taskgate mints — comes back in the X-Request-Id response header
// and is on every log line written for that request (its request line, task.created, a task's
// answer and cancellation, an inline call the client walked away from). Task lines written later,
// outside any request, carry the taskId. A hostile X-Request-Id is replaced, never echoed or logged.
// Real taskgate, real example legacy server, logs captured from the real pino logger.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createLogger } from "../../src/observability/logger.js";
import { legacyInitialize, legacyRequest } from "../support/legacyClient.js";
import { LogCapture, type LogLine } from "../support/logCapture.js";
import { modernBody, modernHeaders, type RpcOptions, resultOf, rpc, TASKS_CAPS } from "../support/mcpClient.js";
import { type Stack, startStack } from "../support/stack.js";
import { pollTask } from "../support/tasks.js";
import { eventually, nextEvent } from "../support/waiting.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TASKS_AND_FORMS = { ...TASKS_CAPS, elicitation: {} };

describe("request ids", () => {
  let stack: Stack;
  const logs = new LogCapture();
  before(async () => {
    stack = await startStack({ speed: 1, config: { tasks: { tools: { ask_then_work: "always" } } }, log: createLogger("info", logs) });
  });
  after(() => stack.close());

  /** The request's one `request` line (written once its response ended). */
  const requestLine = async (requestId: string): Promise<LogLine> => {
    await eventually(
      () => logs.lines.some((line) => line.event === "request" && line.requestId === requestId),
      `request line of ${requestId}`,
    );
    return logs.lines.find((line) => line.event === "request" && line.requestId === requestId)!;
  };
  const eventLine = async (event: string, match: (line: LogLine) => boolean): Promise<LogLine> => {
    await eventually(() => logs.lines.some((line) => line.event === event && match(line)), `a ${event} line`);
    return logs.lines.find((line) => line.event === event && match(line))!;
  };
  const call = (method: string, params: Record<string, unknown>, options: RpcOptions) => rpc(stack.url, method, params as never, options);

  test("an X-Request-Id is echoed and on every line of its request; later task lines carry the taskId", async () => {
    const created = await call(
      "tools/call",
      { name: "ask_then_work", arguments: { ms: 60_000 } },
      { capabilities: TASKS_AND_FORMS, headers: { "X-Request-Id": "req-create-1" } },
    );
    assert.equal(created.headers.get("x-request-id"), "req-create-1");
    const taskId = resultOf(created).taskId as string;
    assert.ok(taskId, JSON.stringify(created.message));
    const requested = await requestLine("req-create-1");
    assert.equal(requested.taskId, taskId);
    assert.equal(requested.rpcMethod, "tools/call");
    const born = await eventLine("task.created", (line) => line.taskId === taskId);
    assert.equal(born.requestId, "req-create-1", "task.created is written while its request runs");

    // The question comes later, outside any request: the line says which task, and no request.
    const asked = await eventLine("task.input_required", (line) => line.taskId === taskId);
    assert.equal(asked.requestId, undefined);

    const task = await pollTask(stack.url, taskId, (t) => t.status === "input_required");
    const [key] = Object.keys(task.inputRequests as object);
    const answered = await call(
      "tasks/update",
      { taskId, inputResponses: { [key!]: { action: "accept", content: { name: "Ada" } } } },
      { capabilities: TASKS_CAPS, headers: { "X-Request-Id": "req-answer-1" } },
    );
    assert.equal(answered.headers.get("x-request-id"), "req-answer-1");
    const delivered = await eventLine("task.answered", (line) => line.taskId === taskId);
    assert.equal(delivered.requestId, "req-answer-1");
    assert.equal(delivered.rpcMethod, "tasks/update");

    await call("tasks/cancel", { taskId }, { capabilities: TASKS_CAPS, headers: { "X-Request-Id": "req-cancel-1" } });
    assert.equal((await eventLine("task.cancelled", (line) => line.taskId === taskId)).requestId, "req-cancel-1");
    // The upstream call is the task's now: its cancellation names the task (issue 12), not the request that started it.
    const stopped = await eventLine("upstream.call.cancelled", (line) => line.taskId === taskId);
    assert.equal(stopped.reason, "task cancelled by the client");
    assert.equal(stopped.requestId, undefined);
    const cancelLine = await requestLine("req-cancel-1");
    assert.equal(cancelLine.taskId, taskId);
    assert.equal(cancelLine.unanswered, undefined, "an answered request's line has no unanswered");
  });

  test("an inline call the client leaves: its upstream.call.cancelled line carries the request's id", async () => {
    const started = nextEvent(stack.legacy.events, "tool-started", (e: { tool: string }) => e.tool === "slow_echo");
    const leave = new AbortController();
    const reply = call(
      "tools/call",
      { name: "slow_echo", arguments: { text: "x", ms: 60_000 } },
      { headers: { "X-Request-Id": "req-inline-1" }, signal: leave.signal },
    );
    await started;
    leave.abort();
    await assert.rejects(reply);
    const stopped = await eventLine("upstream.call.cancelled", (line) => line.requestId === "req-inline-1");
    assert.equal(stopped.rpcMethod, "tools/call");
    assert.equal(stopped.reason, "client closed the stream");
    const line = await requestLine("req-inline-1");
    assert.equal(line.outcome, "client_disconnected");
    // It left before taskgate sent a status line: the line says so (its status, 200 by default, was never sent).
    assert.equal(line.unanswered, true, JSON.stringify(line));
  });

  test("without an id, taskgate mints a UUID, echoes it and logs it", async () => {
    const reply = await call("tools/list", {}, {});
    const id = reply.headers.get("x-request-id") ?? "";
    assert.match(id, UUID);
    assert.equal((await requestLine(id)).rpcMethod, "tools/list");
    const other = await call("tools/list", {}, {});
    assert.notEqual(other.headers.get("x-request-id"), id, "every request its own id");
  });

  test("every kind of answer echoes it: an SSE stream, a notification's 202, a GET's 405, a legacy pass-through, a 413", async () => {
    const streamed = await call(
      "tools/call",
      { name: "slow_echo", arguments: { text: "s", ms: 300, progressMs: 50 } },
      { headers: { "X-Request-Id": "req-sse" }, meta: { progressToken: "p" } },
    );
    assert.match(streamed.contentType, /text\/event-stream/);
    assert.equal(streamed.headers.get("x-request-id"), "req-sse");
    const noted = await fetch(stack.url, {
      method: "POST",
      headers: { ...modernHeaders("notifications/cancelled", {}), "X-Request-Id": "req-note" },
      body: JSON.stringify({ ...modernBody("notifications/cancelled", { requestId: 12345 }), id: undefined }),
    });
    assert.equal(noted.status, 202);
    assert.equal(noted.headers.get("x-request-id"), "req-note");
    const got = await fetch(stack.url, { method: "GET", headers: { "X-Request-Id": "req-get" } });
    assert.equal(got.status, 405);
    assert.equal(got.headers.get("x-request-id"), "req-get");
    const legacy = await legacyRequest(stack.url, { body: legacyInitialize(), headers: { "X-Request-Id": "req-legacy" } });
    assert.equal(legacy.status, 200);
    assert.ok(legacy.headers.get("mcp-session-id"), "the upstream's answer came through the legacy door");
    assert.equal(legacy.headers.get("x-request-id"), "req-legacy");
    const large = await fetch(stack.url, {
      method: "POST",
      headers: { ...modernHeaders("tools/list", {}), "X-Request-Id": "req-large" },
      body: "x".repeat(5 * 1024 * 1024),
    });
    assert.equal(large.status, 413);
    assert.equal(large.headers.get("x-request-id"), "req-large");
  });

  test("a W3C traceparent's trace id becomes the request id; an invalid one is ignored", async () => {
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const traced = await call("tools/list", {}, { headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } });
    assert.equal(traced.headers.get("x-request-id"), traceId);
    assert.equal((await requestLine(traceId)).rpcMethod, "tools/list");
    const zero = await call("tools/list", {}, { headers: { traceparent: `00-${"0".repeat(32)}-b7ad6b7169203331-01` } });
    assert.match(zero.headers.get("x-request-id") ?? "", UUID);
  });

  test("rejections carry the id and their reason: a missing token, an unsupported protocol version", async () => {
    const refused = await call("tools/list", {}, { token: null, headers: { "X-Request-Id": "req-no-token" } });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get("x-request-id"), "req-no-token");
    const line = await requestLine("req-no-token");
    assert.equal(line.status, 401);
    assert.equal(typeof line.rejected, "string", "the reason of the refusal is logged");
    const badVersion = await call(
      "tools/list",
      {},
      { headers: { "X-Request-Id": "req-bad-version", "MCP-Protocol-Version": "1999-01-01" } },
    );
    assert.equal(badVersion.headers.get("x-request-id"), "req-bad-version");
    const rejected = await requestLine("req-bad-version");
    assert.equal(typeof rejected.rejected, "number");
    assert.match(String(rejected.detail), /1999-01-01/, "the envelope's own message says why");
  });

  const hostile: Array<[string, string, RegExp]> = [
    ["too long", "x".repeat(4096), /longer than 128 characters \(4096\)/],
    ["a tab inside", "evil\tvalue", /not visible ASCII/],
    ["non-ASCII", "caf\u00e9-123", /not visible ASCII/],
    ["a space inside", "one two", /not visible ASCII/],
  ];
  for (const [what, value, why] of hostile) {
    test(`a hostile X-Request-Id (${what}) is replaced by a minted one, never echoed or logged`, async () => {
      const reply = await call("tools/list", {}, { headers: { "X-Request-Id": value } });
      assert.equal(reply.status, 200);
      const id = reply.headers.get("x-request-id") ?? "";
      assert.match(id, UUID);
      const line = await requestLine(id);
      assert.match(String(line.requestIdRefused), why);
      assert.deepEqual(logs.mentioning(JSON.stringify(value).slice(1, -1)), [], "the refused value appears on no log line");
    });
  }
});
