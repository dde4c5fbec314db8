// E2E: tools/call answered inline (the client did not declare the tasks extension), over real HTTP
// through a running taskgate in front of the real example legacy server: JSON for quick results,
// SSE with the client's progress for slow ones, tool errors vs JSON-RPC errors, a client that goes
// away, and an upstream question (MRTR input_required, then the retry that resumes the call). Upstream observations come from
// the legacy server's `events`. Run: node --import tsx --test test/e2e/inlineCall.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createParser } from "eventsource-parser";
import type { CancelledEvent, ToolFinishedEvent, ToolStartedEvent } from "../../examples/legacy-server/state.js";
import { ErrorCode } from "../../src/protocol/errors.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { errorOf, modernBody, modernHeaders, resultOf, rpc } from "../support/mcpClient.js";
import { type Stack, startStack } from "../support/stack.js";
import { eventually, nextEvent } from "../support/waiting.js";

/** A held MRTR call nobody resumes is cancelled upstream after this long. */
const HOLD_TIMEOUT_MS = 1000;

let stack: Stack;
before(async () => {
  stack = await startStack({ speed: 20, config: { mrtr: { holdTimeoutMs: HOLD_TIMEOUT_MS } } });
});
after(async () => {
  await stack.close();
});

function textOf(result: JsonObject): string {
  return (result.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("");
}

const progressEvents = (events: JsonObject[]) => events.filter((e) => e.method === "notifications/progress");

/** POSTs a tools/call with our own AbortController; resolves once the response headers arrived. */
async function startCall(name: string, args: JsonObject, controller: AbortController, meta: JsonObject = {}) {
  const params = { name, arguments: args };
  return fetch(stack.url, {
    method: "POST",
    headers: modernHeaders("tools/call", params),
    body: JSON.stringify(modernBody("tools/call", params, { meta })),
    signal: controller.signal,
  });
}

describe("inline tools/call", () => {
  test("a quick tool is answered as application/json with resultType complete", async () => {
    const reply = await rpc(stack.url, "tools/call", { name: "greet", arguments: { name: "Ada" } }, { id: "greet-1" });
    assert.equal(reply.status, 200);
    assert.match(reply.contentType, /^application\/json/);
    assert.equal(reply.message.id, "greet-1");
    const result = resultOf(reply);
    assert.equal(result.resultType, "complete");
    assert.equal(textOf(result), "Hello, Ada!");
    assert.equal(result.isError, undefined);
  });

  test("a slow tool with a progressToken streams ≥3 progress notifications with the exact token, increasing, then the result", async () => {
    const token = "report-progress-1";
    const reply = await rpc(
      stack.url,
      "tools/call",
      { name: "build_report", arguments: { month: "2025-03" } },
      { id: 42, meta: { progressToken: token } },
    );
    assert.equal(reply.status, 200);
    assert.match(reply.contentType, /^text\/event-stream/);
    assert.equal(reply.headers.get("x-accel-buffering"), "no");

    const progress = progressEvents(reply.events);
    assert.ok(progress.length >= 3, `expected ≥3 progress notifications, got ${progress.length}`);
    const values = progress.map((e) => {
      const params = e.params as { progressToken: unknown; progress: number; total?: number };
      assert.equal(params.progressToken, token, "the client's exact token");
      return params.progress;
    });
    for (let i = 1; i < values.length; i++) assert.ok(values[i]! > values[i - 1]!, `progress strictly increases: ${values.join(",")}`);

    // The final response is the last message of the stream, after every notification.
    const last = reply.events.at(-1)!;
    assert.equal(last.id, 42);
    assert.deepEqual(last, reply.message);
    const result = resultOf(reply);
    assert.equal(result.resultType, "complete");
    // No elicitation capability was declared, so the legacy server used its default instead of asking.
    assert.match(textOf(result), /Report for 2025-03: .*without charts \(the client cannot ask the user; default: no charts\)/);
  });

  test("an integer progressToken is echoed as the same integer", async () => {
    const reply = await rpc(
      stack.url,
      "tools/call",
      { name: "build_report", arguments: { month: "2025-04" } },
      { meta: { progressToken: 7 } },
    );
    const progress = progressEvents(reply.events);
    assert.ok(progress.length >= 3);
    for (const e of progress) assert.equal((e.params as JsonObject).progressToken, 7);
    assert.match(textOf(resultOf(reply)), /Report for 2025-04/);
  });

  test("a slow tool without a progressToken gets no progress notifications, only the result", async () => {
    const reply = await rpc(stack.url, "tools/call", { name: "slow_echo", arguments: { text: "later", ms: 8000 } });
    assert.equal(reply.status, 200);
    assert.equal(progressEvents(reply.events).length, 0);
    assert.equal(textOf(resultOf(reply)), "later");
  });

  test("a tool error comes back as a result with isError true", async () => {
    const reply = await rpc(stack.url, "tools/call", { name: "fail_tool", arguments: {} }, { id: "fail-1" });
    assert.equal(reply.status, 200);
    assert.equal(reply.message.id, "fail-1");
    assert.equal("error" in reply.message, false);
    const result = resultOf(reply);
    assert.equal(result.isError, true);
    assert.equal(result.resultType, "complete");
    assert.equal(textOf(result), "The tool failed on purpose");
  });

  test("an upstream JSON-RPC error comes back as a JSON-RPC error, not a result", async () => {
    const reply = await rpc(stack.url, "tools/call", { name: "broken_tool", arguments: {} }, { id: "broken-1" });
    assert.equal(reply.message.id, "broken-1");
    assert.equal("result" in reply.message, false);
    const error = errorOf(reply);
    assert.equal(error.code, ErrorCode.InternalError);
    assert.equal(error.message, "broken_tool always fails");
  });
});

describe("inline tools/call: the client goes away", () => {
  test("aborting the SSE stream mid-call cancels the upstream tool (legacy server emits 'cancelled')", async () => {
    const started = nextEvent<ToolStartedEvent>(stack.legacy.events, "tool-started", (e) => e.tool === "build_report");
    const cancelled = nextEvent<CancelledEvent>(stack.legacy.events, "cancelled", (e) => e.tool === "build_report", 8000);
    const controller = new AbortController();
    const response = await startCall("build_report", { month: "2025-05" }, controller, { progressToken: "abort-me" });
    await started;
    assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);

    // Read until the first progress notification, then hang up.
    let sawProgress = false;
    const parser = createParser({
      onEvent: (e) => {
        if ((JSON.parse(e.data) as JsonObject).method === "notifications/progress") sawProgress = true;
      },
    });
    const decoder = new TextDecoder();
    const reader = response.body!.getReader();
    while (!sawProgress) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
    assert.ok(sawProgress, "the stream carried progress before we hung up");
    controller.abort();

    const event = await cancelled;
    assert.equal(event.tool, "build_report");
  });

  test("aborting before any response byte arrived also cancels the upstream tool", async () => {
    const started = nextEvent<ToolStartedEvent>(stack.legacy.events, "tool-started", (e) => e.tool === "slow_echo");
    const cancelled = nextEvent<CancelledEvent>(stack.legacy.events, "cancelled", (e) => e.tool === "slow_echo", 8000);
    const finishedOk = nextEvent<ToolFinishedEvent>(
      stack.legacy.events,
      "tool-finished",
      (e) => e.tool === "slow_echo" && e.outcome === "ok",
      3000,
    );
    finishedOk.catch(() => undefined);
    const controller = new AbortController();
    const pending = startCall("slow_echo", { text: "never", ms: 40_000 }, controller);
    pending.catch(() => undefined);
    await started;
    controller.abort();
    await assert.rejects(pending, { name: "AbortError" });
    const event = await cancelled;
    assert.equal(event.tool, "slow_echo");
  });
});

describe("inline tools/call: the upstream asks a question", () => {
  // The client declared elicitation but not tasks, so the question cannot become task input and
  // must never travel as a server-to-client JSON-RPC request: it comes back as MRTR input_required.

  async function askCharts(id: string, month: string) {
    const reply = await rpc(
      stack.url,
      "tools/call",
      { name: "build_report", arguments: { month } },
      { id, capabilities: { elicitation: {} } },
    );
    assert.equal(reply.status, 200);
    assert.equal(reply.message.id, id);
    for (const e of reply.events) assert.equal("id" in e && "method" in e, false, `no server request on the stream: ${JSON.stringify(e)}`);
    const result = resultOf(reply);
    assert.ok(result, `expected a result, got ${JSON.stringify(reply.message)}`);
    return result;
  }

  test("the question comes back as an input_required result naming it, with a requestState", async () => {
    const result = await askCharts("asks-1", "2025-06");
    assert.equal(result.resultType, "input_required");
    assert.equal("ttlMs" in result, false, "input_required results are never cacheable");
    const requests = Object.values(result.inputRequests as Record<string, { method: string; params: JsonObject }>);
    assert.equal(requests.length, 1);
    assert.equal(requests[0]!.method, "elicitation/create");
    assert.equal(requests[0]!.params.message, "Include charts?");
    assert.equal(typeof result.requestState, "string");
  });

  test("retrying with the answer and the requestState resumes the same upstream call to its result", async () => {
    const first = await askCharts("asks-2", "2025-02");
    const [key] = Object.keys(first.inputRequests as JsonObject);
    const answered = nextEvent<{ tool: string; action: string; content: unknown }>(
      stack.legacy.events,
      "elicitation-answered",
      (e) => e.tool === "build_report" && e.action === "accept",
    );
    const started = nextEvent<ToolStartedEvent>(stack.legacy.events, "tool-started", (e) => e.tool === "build_report", 1500);
    started.catch(() => undefined);
    const retry = await rpc(
      stack.url,
      "tools/call",
      {
        name: "build_report",
        arguments: { month: "2025-02" },
        inputResponses: { [key!]: { action: "accept", content: { charts: true } } },
        requestState: first.requestState as string,
      },
      { id: "asks-2-retry", capabilities: { elicitation: {} } },
    );
    assert.equal(retry.message.id, "asks-2-retry");
    const result = resultOf(retry);
    assert.ok(result, `expected a result, got ${JSON.stringify(retry.message)}`);
    assert.equal(result.resultType, "complete");
    assert.match(textOf(result), /Report for 2025-02: .*charts included\./);
    assert.deepEqual((await answered).content, { charts: true }, "the upstream got the client's answer");
    await assert.rejects(started, /timed out/, "the retry resumed the held call; it did not start a new one");
  });

  test("a held call nobody resumes is cancelled upstream after the hold timeout", async () => {
    // Earlier tests' held calls may expire meanwhile: follow this call by its upstream ids.
    const started = nextEvent<ToolStartedEvent>(stack.legacy.events, "tool-started", (e) => e.tool === "build_report");
    const cancelledEvents: CancelledEvent[] = [];
    const onCancelled = (e: CancelledEvent) => cancelledEvents.push(e);
    stack.legacy.events.on("cancelled", onCancelled);
    try {
      const result = await askCharts("asks-3", "2025-01");
      assert.equal(result.resultType, "input_required");
      const mine = await started;
      const isMine = (e: CancelledEvent) => e.requestId === mine.requestId && e.sessionId === mine.sessionId;
      await eventually(() => cancelledEvents.some(isMine), "the upstream saw 'cancelled'", HOLD_TIMEOUT_MS + 5000);
      assert.ok(cancelledEvents.some(isMine), "the upstream saw 'cancelled' for the held call");
    } finally {
      stack.legacy.events.off("cancelled", onCancelled);
    }
  });
});
