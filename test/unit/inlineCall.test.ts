// InlineCall, the state machine of an inline reply, without sockets: which Reply it gives (JSON
// when the final message comes first within the window, else a stream), the messages of a stream
// in order, MRTR rounds (questions gathered, preset answers used, undeclared kinds refused) and a
// client that goes away. The upstream call is a ScriptedCall test double.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InlineCall, type InlineRequest } from "../../src/calls/inlineCall.js";
import { LiveInlineCalls } from "../../src/calls/liveInlineCalls.js";
import { type CallBinding, ParkedCalls } from "../../src/calls/parkedCalls.js";
import { RequestStateCodec } from "../../src/calls/requestStateCodec.js";
import { createLogger } from "../../src/observability/logger.js";
import { ErrorCode } from "../../src/protocol/errors.js";
import type { Reply } from "../../src/protocol/reply.js";
import type { ClientCapabilities, JsonObject } from "../../src/protocol/wire.js";
import { ClientGone } from "../../src/util/clientGone.js";
import { formQuestion, ScriptedCall } from "../support/scriptedCall.js";

const WINDOW_MS = 40;
const binding: CallBinding = { owner: "owner-hash", method: "tools/call", name: "tool", args: "digest" };

function setup(capabilities: ClientCapabilities = {}, extra: Partial<Omit<InlineRequest, "gone">> = {}, presetAnswers?: JsonObject) {
  const call = new ScriptedCall();
  const parked = new ParkedCalls(new RequestStateCodec(), 60_000, createLogger("silent"));
  const gone = new ClientGone();
  const clientGone = { abort: () => gone.leave() };
  const request: InlineRequest = { id: 7, capabilities, note: {}, gone, ...extra };
  const live = new LiveInlineCalls();
  const inline = new InlineCall(call, request, { parked, live, binding, ...(presetAnswers ? { presetAnswers } : {}) });
  return { call, parked, live, request, inline, clientGone, reply: () => inline.reply(WINDOW_MS) };
}

async function drain(reply: Reply): Promise<JsonObject[]> {
  assert.equal(reply.kind, "stream");
  const messages: JsonObject[] = [];
  if (reply.kind === "stream") for await (const message of reply.messages) messages.push(message);
  return messages;
}

describe("InlineCall", () => {
  it("a result within the window is a JSON result reply with resultType complete", async () => {
    const { call, reply } = setup();
    const pending = reply();
    call.finish({ content: [{ type: "text", text: "hi" }] });
    assert.deepEqual(await pending, { kind: "result", result: { content: [{ type: "text", text: "hi" }], resultType: "complete" } });
  });

  it("an upstream JSON-RPC error within the window is an error reply with its own code", async () => {
    const { call, reply } = setup();
    const pending = reply();
    call.fail({ code: -32602, message: "bad arguments" });
    const got = await pending;
    assert.equal(got.kind, "error");
    if (got.kind === "error") assert.deepEqual([got.error.code, got.error.message, got.error.httpStatus], [-32602, "bad arguments", 200]);
  });

  it("progress before the result (with a progressToken) makes a stream: progress, then the final response with the request id", async () => {
    const { call, reply } = setup({}, { progressToken: "p1" });
    const pending = reply();
    call.progress({ progress: 1, total: 2 });
    const got = await pending;
    call.progress({ progress: 2, total: 2 });
    call.finish({ content: [] });
    const messages = await drain(got);
    assert.deepEqual(messages, [
      { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "p1", progress: 1, total: 2 } },
      { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "p1", progress: 2, total: 2 } },
      { jsonrpc: "2.0", id: 7, result: { content: [], resultType: "complete" } },
    ]);
  });

  it("progress without a progressToken is not sent; a slow result still streams once the window passed", async () => {
    const { call, reply } = setup();
    call.progress({ progress: 1 });
    const got = await reply();
    call.finish({ content: [] });
    assert.deepEqual(await drain(got), [{ jsonrpc: "2.0", id: 7, result: { content: [], resultType: "complete" } }]);
  });

  it("a question of a kind the request did not declare: -32021 (HTTP 400), the question refused, the call cancelled", async () => {
    const { call, request, reply } = setup({});
    const pending = reply();
    const { answered } = call.ask(formQuestion("name"));
    const got = await pending;
    assert.equal(got.kind, "error");
    if (got.kind === "error") {
      assert.equal(got.error.code, ErrorCode.MissingRequiredClientCapability);
      assert.equal(got.error.httpStatus, 400);
      assert.deepEqual(got.error.data, { requiredCapabilities: { elicitation: { form: {} } } });
    }
    assert.equal(((await answered) as { code: number }).code, ErrorCode.InvalidRequest);
    assert.ok(call.abortedBecause);
    assert.equal(request.note.outcome, "missing_capability");
  });

  it("questions asked a few ms apart become one input_required round; the call is parked", async () => {
    const { call, parked, inline } = setup({ elicitation: {} });
    const pending = inline.reply(5_000); // a JSON window far past the gathering one, also on a loaded machine
    call.ask(formQuestion("first"));
    await Promise.resolve(); // a moment later, well within the gathering window
    call.ask(formQuestion("second"));
    const got = await pending;
    assert.equal(got.kind, "result");
    if (got.kind !== "result") return;
    assert.equal(got.result.resultType, "input_required");
    assert.deepEqual(Object.keys(got.result.inputRequests as JsonObject), ["first", "second"]);
    assert.equal(typeof got.result.requestState, "string");
    assert.equal(parked.count(), 1);
  });

  it("a preset answer that fits its question is delivered without a round", async () => {
    const { call, parked, reply } = setup({ elicitation: {} }, {}, { name: { action: "accept", content: { name: "Ada" } } });
    const pending = reply();
    const { answered } = call.ask(formQuestion("name"));
    assert.deepEqual(await answered, { action: "accept", content: { name: "Ada" } });
    call.finish({ content: [] });
    assert.equal((await pending).kind, "result");
    await call.outcome;
    assert.equal(parked.count(), 0, "released once its call settled");
  });

  it("a preset answer that does not fit is not delivered: the question goes to the client", async () => {
    const { call, inline } = setup({ elicitation: {} }, {}, { name: { action: "accept", content: { name: 42 } } });
    const pending = inline.reply(5_000); // a JSON window far past the gathering one, also on a loaded machine
    call.ask(formQuestion("name"));
    const got = await pending;
    assert.ok(got.kind === "result" && got.result.resultType === "input_required");
  });

  it("a client that goes away mid-stream cancels the call upstream", async () => {
    const { call, request, reply } = setup({}, { progressToken: 1 });
    const pending = reply();
    call.progress({ progress: 1 });
    const got = await pending;
    assert.equal(got.kind, "stream");
    if (got.kind === "stream") got.onClientGone();
    assert.equal(call.abortedBecause, "client closed the stream");
    assert.equal(request.note.outcome, "client_disconnected");
    assert.equal((await drain(got)).length, 1, "only what was sent before");
  });

  it("finishesWithin: a result in time is true; a call still running is let go (not cancelled) and false", async () => {
    const quick = setup();
    const decided = quick.inline.finishesWithin(1_000);
    quick.call.finish({ content: [] });
    assert.equal(await decided, true);
    assert.deepEqual(await quick.reply(), { kind: "result", result: { content: [], resultType: "complete" } });

    const slow = setup({}, { progressToken: "p" });
    assert.equal(await slow.inline.finishesWithin(WINDOW_MS), false);
    assert.equal(slow.inline.isDetached, true);
    slow.call.progress({ progress: 1 });
    slow.clientGone.abort();
    assert.equal(slow.call.abortedBecause, undefined, "a task holds the call now: leaving does not cancel it");
  });

  it("finishesWithin: a question near the deadline is still asked inline", async () => {
    const { call, inline } = setup({ elicitation: {} });
    const decided = inline.finishesWithin(5);
    call.ask(formQuestion("name"));
    assert.equal(await decided, true);
    const got = await inline.reply(5_000); // past the gathering window, also on a loaded machine
    assert.ok(got.kind === "result" && got.result.resultType === "input_required");
  });

  it("shutdown drains: a call still streaming after the grace period ends with a shutting_down error frame and is cancelled", async () => {
    const { call, live, reply } = setup({}, { progressToken: "p" });
    const pending = reply();
    call.progress({ progress: 1 });
    const got = await pending;
    const messages = drain(got);
    assert.equal(live.count(), 1);
    await live.drain(20);
    const frames = await messages;
    assert.deepEqual(frames.at(-1), {
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32603, message: "taskgate is shutting down", data: { reason: "shutting_down" } },
    });
    assert.equal(call.abortedBecause, "gateway shutting down");
    assert.equal(live.count(), 0);
  });

  it("shutdown drains: a call that finishes within the grace period ends normally", async () => {
    const { call, live, reply } = setup();
    const pending = reply();
    setTimeout(() => call.finish({ content: [] }), 5);
    await live.drain(5_000);
    assert.deepEqual(await pending, { kind: "result", result: { content: [], resultType: "complete" } });
  });

  it("a client that leaves during the JSON window cancels the call and ends the wait at once", async () => {
    const { call, clientGone, inline } = setup();
    const started = performance.now();
    const pending = inline.reply(10_000);
    clientGone.abort();
    await pending;
    assert.ok(performance.now() - started < 5_000, "did not wait for the window");
    assert.equal(call.abortedBecause, "client closed the stream");
  });
});
