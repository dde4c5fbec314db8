// E2E: inline MRTR (the client did NOT declare the tasks extension), over real HTTP through a
// running taskgate in front of the real example legacy server. Every kind of upstream question
// (form elicitation over one or two rounds, two concurrent questions, URL elicitation, sampling,
// roots, a ping) is driven round by round like a 2026-07-28 client would: a new JSON-RPC id per
// retry, requestState echoed byte for byte. Then every way to abuse a requestState, each followed
// by proof that the held call still completes for its rightful owner. Upstream observations come
// from the legacy server's `events`.
// Run: node --import tsx --test test/e2e/mrtrInline.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type {
  CancelledEvent,
  ElicitationAnsweredEvent,
  RootsAnsweredEvent,
  SamplingAnsweredEvent,
  ToolStartedEvent,
} from "../../examples/legacy-server/state.js";
import { ErrorCode } from "../../src/protocol/errors.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { errorOf, type RpcReply, resultOf, rpc } from "../support/mcpClient.js";
import { type Stack, startStack } from "../support/stack.js";
import { nextEvent } from "../support/waiting.js";

const FORMS = { elicitation: {} };
const URLS = { elicitation: { url: {} } };
const SAMPLING = { sampling: {} };
const ROOTS = { roots: {} };

type InputRequest = { method: string; params: JsonObject };

interface Round {
  reply: RpcReply;
  inputRequests: Record<string, InputRequest>;
  requestState: string;
}

interface Caller {
  token?: string;
  capabilities?: JsonObject;
}

let stack: Stack;
before(async () => {
  stack = await startStack({ speed: 20 });
});
after(async () => {
  await stack.close();
});

function textOf(result: JsonObject): string {
  return (result.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("");
}

/** No server→client JSON-RPC request ever travels on a response stream. */
function assertNoServerRequests(reply: RpcReply): void {
  for (const e of reply.events) assert.equal("id" in e && "method" in e, false, `no server request on the stream: ${JSON.stringify(e)}`);
}

/** tools/call (first round or a retry, depending on `extra`). */
function callTool(url: string, name: string, args: JsonObject, who: Caller = {}, extra: JsonObject = {}): Promise<RpcReply> {
  return rpc(
    url,
    "tools/call",
    { name, arguments: args, ...extra },
    { capabilities: who.capabilities ?? FORMS, token: who.token ?? "alice" },
  );
}

/** Asserts an MRTR input_required result and returns its parts. */
function expectInputRequired(reply: RpcReply): Round {
  assert.equal(reply.status, 200, JSON.stringify(reply.message));
  assertNoServerRequests(reply);
  const result = resultOf(reply);
  assert.ok(result, `expected a result, got ${JSON.stringify(reply.message)}`);
  assert.equal(result.resultType, "input_required", `expected input_required, got ${JSON.stringify(result)}`);
  assert.equal("ttlMs" in result, false, "input_required results are never cacheable");
  assert.equal("cacheScope" in result, false, "input_required results are never cacheable");
  assert.equal(typeof result.requestState, "string");
  assert.ok((result.requestState as string).length > 0);
  assert.ok(result.inputRequests && typeof result.inputRequests === "object", "inputRequests present");
  for (const [key, request] of Object.entries(result.inputRequests as Record<string, JsonObject>)) {
    assert.equal("jsonrpc" in request, false, `${key}: an input request has no jsonrpc`);
    assert.equal("id" in request, false, `${key}: an input request has no id`);
    assert.equal("_meta" in ((request.params ?? {}) as JsonObject), false, `${key}: no legacy _meta in params`);
  }
  return { reply, inputRequests: result.inputRequests as Record<string, InputRequest>, requestState: result.requestState as string };
}

/** Asserts a complete result and returns it. */
function expectComplete(reply: RpcReply): JsonObject {
  assert.equal(reply.status, 200, JSON.stringify(reply.message));
  assertNoServerRequests(reply);
  const result = resultOf(reply);
  assert.ok(result, `expected a result, got ${JSON.stringify(reply.message)}`);
  assert.equal(result.resultType, "complete", `expected complete, got ${JSON.stringify(result)}`);
  assert.equal("requestState" in result, false);
  assert.equal("inputRequests" in result, false);
  return result;
}

/** Asserts a -32602 error whose message matches `pattern`; returns the message. */
function expectInvalidParams(reply: RpcReply, pattern: RegExp): string {
  const error = errorOf(reply);
  assert.ok(error, `expected a JSON-RPC error, got ${JSON.stringify(reply.message)}`);
  assert.equal("result" in reply.message, false, "an error reply carries no result");
  assert.equal(error.code, ErrorCode.InvalidParams, JSON.stringify(error));
  assert.match(error.message, pattern);
  return error.message;
}

/** The single key of a round (asserting there is exactly one). */
function onlyKey(round: Round): string {
  const keys = Object.keys(round.inputRequests);
  assert.equal(keys.length, 1, `expected exactly one input request, got ${keys.join(", ")}`);
  return keys[0]!;
}

/** Replaces the character at `index` with another character of the base64url alphabet. */
function flipAt(text: string, index: number): string {
  const replacement = text[index] === "A" ? "B" : "A";
  return text.slice(0, index) + replacement + text.slice(index + 1);
}

const accept = (content: JsonObject) => ({ action: "accept", content });

/** two_rounds round 1 (asks `first`). */
async function twoRoundsFirst(who: Caller = {}): Promise<Round> {
  const round = expectInputRequired(await callTool(stack.url, "two_rounds", {}, who));
  assert.deepEqual(Object.keys(round.inputRequests), ["first"]);
  return round;
}

/** Retries two_rounds with the answer to `first` → round 2 (asks `last`). */
async function twoRoundsSecond(first: Round, who: Caller = {}): Promise<Round> {
  const round = expectInputRequired(
    await callTool(stack.url, "two_rounds", {}, who, {
      requestState: first.requestState,
      inputResponses: { first: accept({ first: "Ada" }) },
    }),
  );
  assert.deepEqual(Object.keys(round.inputRequests), ["last"]);
  return round;
}

/** Finishes two_rounds from round 2 → "Hello, Ada Lovelace!". */
async function twoRoundsFinish(second: Round, who: Caller = {}): Promise<void> {
  const result = expectComplete(
    await callTool(stack.url, "two_rounds", {}, who, {
      requestState: second.requestState,
      inputResponses: { last: accept({ last: "Lovelace" }) },
    }),
  );
  assert.equal(textOf(result), "Hello, Ada Lovelace!");
}

describe("inline MRTR: each kind of question, round by round", () => {
  test("form elicitation over two rounds: first → last → the greeting, each retry with a new id", async () => {
    const started = nextEvent<ToolStartedEvent>(stack.legacy.events, "tool-started", (e) => e.tool === "two_rounds");
    const first = await twoRoundsFirst();
    const startedEvent = await started;
    const ask = first.inputRequests.first!;
    assert.equal(ask.method, "elicitation/create");
    assert.equal(ask.params.message, "First name?");
    assert.ok(ask.params.mode === undefined || ask.params.mode === "form", `form mode, got ${String(ask.params.mode)}`);
    assert.deepEqual((ask.params.requestedSchema as JsonObject).required, ["first"]);

    const second = await twoRoundsSecond(first);
    assert.notEqual(second.reply.message.id, first.reply.message.id, "each retry is a new JSON-RPC request id");
    assert.notEqual(second.requestState, first.requestState, "each round has its own requestState");
    assert.equal(second.inputRequests.last!.method, "elicitation/create");
    assert.equal(second.inputRequests.last!.params.message, "Last name?");

    // No second upstream call was started by the retries: the same held call was resumed.
    const restarted = nextEvent<ToolStartedEvent>(stack.legacy.events, "tool-started", (e) => e.tool === "two_rounds", 500);
    restarted.catch(() => undefined);
    const finished = nextEvent<{ tool: string; outcome: string; requestId: string | number }>(
      stack.legacy.events,
      "tool-finished",
      (e) => e.tool === "two_rounds" && e.requestId === startedEvent.requestId,
    );
    await twoRoundsFinish(second);
    assert.equal((await finished).outcome, "ok");
    await assert.rejects(restarted, /timed out/);
  });

  test("two_questions: both keys in one round; answering one gives a new round (new requestState) for the other", async () => {
    const first = expectInputRequired(await callTool(stack.url, "two_questions", {}));
    assert.deepEqual(Object.keys(first.inputRequests).sort(), ["colour", "size"]);
    assert.equal(first.inputRequests.colour!.params.message, "Pick a colour");
    assert.equal(first.inputRequests.size!.params.message, "Pick a size");

    const colourAnswered = nextEvent<ElicitationAnsweredEvent>(
      stack.legacy.events,
      "elicitation-answered",
      (e) => e.tool === "two_questions",
    );
    const second = expectInputRequired(
      await callTool(
        stack.url,
        "two_questions",
        {},
        {},
        { requestState: first.requestState, inputResponses: { colour: accept({ colour: "teal" }) } },
      ),
    );
    assert.deepEqual(Object.keys(second.inputRequests), ["size"], "only the unanswered question is asked again");
    assert.notEqual(second.requestState, first.requestState, "a NEW requestState for the new round");
    assert.deepEqual((await colourAnswered).content, { colour: "teal" }, "the answered question already went upstream");

    const result = expectComplete(
      await callTool(
        stack.url,
        "two_questions",
        {},
        {},
        { requestState: second.requestState, inputResponses: { size: accept({ size: "M" }) } },
      ),
    );
    assert.equal(textOf(result), "colour=teal, size=M");
  });

  test("two_questions: both answered in one retry completes at once", async () => {
    const first = expectInputRequired(await callTool(stack.url, "two_questions", {}));
    const result = expectComplete(
      await callTool(
        stack.url,
        "two_questions",
        {},
        {},
        {
          requestState: first.requestState,
          inputResponses: { colour: accept({ colour: "red" }), size: accept({ size: "L" }) },
        },
      ),
    );
    assert.equal(textOf(result), "colour=red, size=L");
  });

  test("URL elicitation: mode url, url and message, NO elicitationId; accept → Authorized.", async () => {
    const round = expectInputRequired(await callTool(stack.url, "ask_url", {}, { capabilities: URLS }));
    const key = onlyKey(round);
    const ask = round.inputRequests[key]!;
    assert.equal(ask.method, "elicitation/create");
    assert.equal(ask.params.mode, "url");
    assert.equal(ask.params.message, "Authorize access to the example service");
    assert.match(ask.params.url as string, /^https:\/\/example\.com\/authorize\?/);
    assert.equal("elicitationId" in ask.params, false, "2026 URL elicitations carry no elicitationId");
    assert.equal("requestedSchema" in ask.params, false);

    const reply = await callTool(
      stack.url,
      "ask_url",
      {},
      { capabilities: URLS },
      { requestState: round.requestState, inputResponses: { [key]: { action: "accept" } } },
    );
    const result = expectComplete(reply);
    assert.equal(textOf(result), "Authorized.");
    for (const e of reply.events) assert.notEqual(e.method, "notifications/elicitation/complete", "no elicitation/complete in 2026");
  });

  test("URL elicitation declined → Not authorized.", async () => {
    const round = expectInputRequired(await callTool(stack.url, "ask_url", {}, { capabilities: URLS }));
    const key = onlyKey(round);
    const result = expectComplete(
      await callTool(
        stack.url,
        "ask_url",
        {},
        { capabilities: URLS },
        { requestState: round.requestState, inputResponses: { [key]: { action: "decline" } } },
      ),
    );
    assert.equal(textOf(result), "Not authorized.");
  });

  test("sampling: sampling/createMessage; the model's answer reaches the legacy server", async () => {
    const who = { capabilities: SAMPLING };
    const round = expectInputRequired(await callTool(stack.url, "ask_sampling", { prompt: "What is six times seven?" }, who));
    const key = onlyKey(round);
    const ask = round.inputRequests[key]!;
    assert.equal(ask.method, "sampling/createMessage");
    const messages = ask.params.messages as { role: string; content: { type: string; text: string } }[];
    assert.equal(messages[0]!.role, "user");
    assert.equal(messages[0]!.content.text, "What is six times seven?");
    assert.equal(ask.params.maxTokens, 100);

    const answered = nextEvent<SamplingAnsweredEvent>(stack.legacy.events, "sampling-answered", (e) => e.tool === "ask_sampling");
    const result = expectComplete(
      await callTool(stack.url, "ask_sampling", { prompt: "What is six times seven?" }, who, {
        requestState: round.requestState,
        inputResponses: { [key]: { role: "assistant", content: { type: "text", text: "42" }, model: "test-model" } },
      }),
    );
    assert.match(textOf(result), /42/);
    const event = await answered;
    assert.equal(event.text, "42");
    assert.equal(event.model, "test-model");
  });

  test("roots: roots/list; the answered roots are listed in the result", async () => {
    const round = expectInputRequired(await callTool(stack.url, "list_roots", {}, { capabilities: ROOTS }));
    const key = onlyKey(round);
    assert.equal(round.inputRequests[key]!.method, "roots/list");
    assert.deepEqual(round.inputRequests[key]!.params, {});

    const answered = nextEvent<RootsAnsweredEvent>(stack.legacy.events, "roots-answered", (e) => e.tool === "list_roots");
    const result = expectComplete(
      await callTool(
        stack.url,
        "list_roots",
        {},
        { capabilities: ROOTS },
        {
          requestState: round.requestState,
          inputResponses: { [key]: { roots: [{ uri: "file:///work/a", name: "A" }, { uri: "file:///work/b" }] } },
        },
      ),
    );
    assert.equal(textOf(result), "Roots: file:///work/a, file:///work/b");
    assert.deepEqual((await answered).roots, ["file:///work/a", "file:///work/b"]);
  });

  test("ping: the client never sees an input_required, just the greeting; the legacy server got its pong", async () => {
    const pinged = nextEvent<{ tool: string }>(stack.legacy.events, "ping-answered", (e) => e.tool === "ping_then_greet");
    const result = expectComplete(await callTool(stack.url, "ping_then_greet", { name: "Grace" }, { capabilities: {} }));
    assert.equal(textOf(result), "Pinged, then: Hello, Grace!");
    await pinged;
  });
});

describe("inline MRTR: only declared kinds are ever shown", () => {
  test("a client that declared nothing gets build_report's fallback result, no question", async () => {
    const result = expectComplete(await callTool(stack.url, "build_report", { month: "2025-03" }, { capabilities: {} }));
    assert.match(textOf(result), /Report for 2025-03: .*without charts \(the client cannot ask the user; default: no charts\)/);
  });

  test("a client that declared nothing gets list_roots' fallback result, no question", async () => {
    const result = expectComplete(await callTool(stack.url, "list_roots", {}, { capabilities: {} }));
    assert.equal(textOf(result), "No roots.");
  });

  test("declaring only sampling: two_rounds shows no elicitation", async () => {
    const reply = await callTool(stack.url, "two_rounds", {}, { capabilities: SAMPLING });
    const result = expectComplete(reply);
    assert.equal(textOf(result), "Hello, stranger! (the client cannot ask the user)");
  });

  test("declaring only URL elicitation: two_rounds (form) shows no form question", async () => {
    const result = expectComplete(await callTool(stack.url, "two_rounds", {}, { capabilities: URLS }));
    assert.equal(textOf(result), "Hello, stranger! (the client cannot ask the user)");
  });

  test("declaring only form elicitation: ask_url shows no URL question", async () => {
    const result = expectComplete(await callTool(stack.url, "ask_url", {}, { capabilities: FORMS }));
    assert.equal(textOf(result), "Not authorized.");
  });

  test("declaring elicitation but not sampling/roots: ask_sampling and list_roots fall back", async () => {
    assert.equal(
      textOf(expectComplete(await callTool(stack.url, "ask_sampling", { prompt: "hi" }, { capabilities: FORMS }))),
      "No model available.",
    );
    assert.equal(textOf(expectComplete(await callTool(stack.url, "list_roots", {}, { capabilities: FORMS }))), "No roots.");
  });

  test("a retry that no longer declares elicitation is not shown the still-open elicitation", async () => {
    const first = expectInputRequired(await callTool(stack.url, "two_questions", {}));
    // Answer nothing and declare nothing: the open questions are form elicitations this request did not declare.
    const reply = await callTool(
      stack.url,
      "two_questions",
      {},
      { capabilities: {} },
      { requestState: first.requestState, inputResponses: {} },
    );
    assert.equal("result" in reply.message, false, `undeclared elicitation shown: ${JSON.stringify(reply.message)}`);
    assert.equal(errorOf(reply)?.code, ErrorCode.MissingRequiredClientCapability, JSON.stringify(reply.message));
    assert.equal(reply.status, 400);
    assert.deepEqual(errorOf(reply).data, { requiredCapabilities: { elicitation: { form: {} } } });
    // The rightful retry (declaring elicitation) still completes the held call.
    const done = expectComplete(
      await callTool(
        stack.url,
        "two_questions",
        {},
        {},
        {
          requestState: first.requestState,
          inputResponses: { colour: accept({ colour: "blue" }), size: accept({ size: "S" }) },
        },
      ),
    );
    assert.equal(textOf(done), "colour=blue, size=S");
  });

  test("a follow-up question of a kind the retry did not declare is refused with -32021, never shown", async () => {
    const first = await twoRoundsFirst();
    // The retry answers `first` but declares only sampling: the upstream's next question (a form) cannot be shown.
    const reply = await callTool(
      stack.url,
      "two_rounds",
      {},
      { capabilities: SAMPLING },
      {
        requestState: first.requestState,
        inputResponses: { first: accept({ first: "Ada" }) },
      },
    );
    assert.equal("result" in reply.message, false, `undeclared elicitation shown: ${JSON.stringify(reply.message)}`);
    assert.equal(errorOf(reply)?.code, ErrorCode.MissingRequiredClientCapability, JSON.stringify(reply.message));
    assertNoServerRequests(reply);
  });
});

describe("inline MRTR: prompts/get and resources/read go through the same path", () => {
  test("prompts/get returns a complete result", async () => {
    const reply = await rpc(stack.url, "prompts/get", { name: "summarize", arguments: { topic: "billing" } }, { capabilities: FORMS });
    const result = expectComplete(reply);
    const messages = result.messages as { role: string; content: { text: string } }[];
    assert.equal(messages[0]!.content.text, "Please summarize recent activity on billing.");
  });

  test("resources/read returns a complete result carrying ttlMs and cacheScope", async () => {
    const reply = await rpc(stack.url, "resources/read", { uri: "example://readme" }, { capabilities: FORMS });
    const result = expectComplete(reply);
    assert.ok(Number.isInteger(result.ttlMs) && (result.ttlMs as number) >= 0, `ttlMs: ${JSON.stringify(result.ttlMs)}`);
    assert.ok(["public", "private"].includes(result.cacheScope as string), `cacheScope: ${JSON.stringify(result.cacheScope)}`);
    const contents = result.contents as { uri: string; text: string }[];
    assert.equal(contents[0]!.text, "An example legacy MCP server for taskgate demos.");
  });
});

describe("inline MRTR: requestState abuse (each followed by the rightful completion)", () => {
  test("tampered MAC part → -32602 integrity; the held call still completes", async () => {
    const first = await twoRoundsFirst();
    const [payload, mac] = first.requestState.split(".") as [string, string];
    const tampered = `${payload}.${flipAt(mac, Math.floor(mac.length / 2))}`;
    assert.notEqual(tampered, first.requestState);
    expectInvalidParams(
      await callTool(stack.url, "two_rounds", {}, {}, { requestState: tampered, inputResponses: { first: accept({ first: "Eve" }) } }),
      /integrity/,
    );
    await twoRoundsFinish(await twoRoundsSecond(first));
  });

  test("tampered payload part → -32602 integrity; the held call still completes", async () => {
    const first = await twoRoundsFirst();
    const [payload, mac] = first.requestState.split(".") as [string, string];
    const tampered = `${flipAt(payload, 5)}.${mac}`;
    assert.notEqual(tampered, first.requestState);
    expectInvalidParams(
      await callTool(stack.url, "two_rounds", {}, {}, { requestState: tampered, inputResponses: { first: accept({ first: "Eve" }) } }),
      /integrity/,
    );
    await twoRoundsFinish(await twoRoundsSecond(first));
  });

  test("garbage requestState (not even the right shape) → -32602", async () => {
    const first = await twoRoundsFirst();
    for (const garbage of ["not-a-state", 42, "", `${first.requestState}.extra`]) {
      const reply = await callTool(
        stack.url,
        "two_rounds",
        {},
        {},
        { requestState: garbage, inputResponses: { first: accept({ first: "Eve" }) } },
      );
      expectInvalidParams(reply, /requestState/);
    }
    await twoRoundsFinish(await twoRoundsSecond(first));
  });

  test("replayed requestState → -32602 already used; the held call still completes with the current one", async () => {
    const first = await twoRoundsFirst();
    const second = await twoRoundsSecond(first);
    expectInvalidParams(
      await callTool(
        stack.url,
        "two_rounds",
        {},
        {},
        { requestState: first.requestState, inputResponses: { first: accept({ first: "Eve" }) } },
      ),
      /already used/,
    );
    // Replaying round 1's state with round 2's answer is refused too.
    expectInvalidParams(
      await callTool(
        stack.url,
        "two_rounds",
        {},
        {},
        { requestState: first.requestState, inputResponses: { last: accept({ last: "Eve" }) } },
      ),
      /already used/,
    );
    await twoRoundsFinish(second);
  });

  test("a requestState used for a completed call cannot be used again", async () => {
    const first = await twoRoundsFirst();
    const second = await twoRoundsSecond(first);
    await twoRoundsFinish(second);
    const again = await callTool(
      stack.url,
      "two_rounds",
      {},
      {},
      { requestState: second.requestState, inputResponses: { last: accept({ last: "Eve" }) } },
    );
    expectInvalidParams(again, /gone|already used/);
  });

  test("foreign identity: bob retries alice's requestState → -32602 another identity; alice still completes", async () => {
    const first = await twoRoundsFirst({ token: "alice" });
    const answered = nextEvent<ElicitationAnsweredEvent>(stack.legacy.events, "elicitation-answered", (e) => e.tool === "two_rounds", 400);
    answered.catch(() => undefined);
    expectInvalidParams(
      await callTool(
        stack.url,
        "two_rounds",
        {},
        { token: "bob" },
        { requestState: first.requestState, inputResponses: { first: accept({ first: "Bob" }) } },
      ),
      /another identity/,
    );
    await assert.rejects(answered, /timed out/, "bob's answer never reached the legacy server");
    await twoRoundsFinish(await twoRoundsSecond(first, { token: "alice" }), { token: "alice" });
  });

  test("mismatched tool: two_rounds' requestState on tools/call greet → -32602 naming the tool; two_rounds still completes", async () => {
    const first = await twoRoundsFirst();
    const message = expectInvalidParams(
      await callTool(
        stack.url,
        "greet",
        { name: "Eve" },
        {},
        { requestState: first.requestState, inputResponses: { first: accept({ first: "Eve" }) } },
      ),
      /two_rounds/,
    );
    assert.match(message, /greet/);
    await twoRoundsFinish(await twoRoundsSecond(first));
  });

  test("mismatched method: a tools/call requestState on prompts/get → -32602", async () => {
    const first = await twoRoundsFirst();
    const reply = await rpc(
      stack.url,
      "prompts/get",
      { name: "two_rounds", requestState: first.requestState, inputResponses: { first: accept({ first: "Eve" }) } },
      { capabilities: FORMS },
    );
    expectInvalidParams(reply, /tools\/call/);
    await twoRoundsFinish(await twoRoundsSecond(first));
  });

  test("mismatched arguments → -32602; the original arguments still complete", async () => {
    const first = await twoRoundsFirst();
    const reply = await callTool(
      stack.url,
      "two_rounds",
      { sneaky: true },
      {},
      { requestState: first.requestState, inputResponses: { first: accept({ first: "Eve" }) } },
    );
    expectInvalidParams(reply, /arguments/);
    await twoRoundsFinish(await twoRoundsSecond(first));
  });

  test("missing answers (inputResponses {}) → a new input_required for what is still open, with a new requestState", async () => {
    const first = await twoRoundsFirst();
    const again = expectInputRequired(
      await callTool(stack.url, "two_rounds", {}, {}, { requestState: first.requestState, inputResponses: {} }),
    );
    assert.deepEqual(Object.keys(again.inputRequests), ["first"]);
    assert.notEqual(again.requestState, first.requestState);
    // The old state is spent now.
    expectInvalidParams(
      await callTool(
        stack.url,
        "two_rounds",
        {},
        {},
        { requestState: first.requestState, inputResponses: { first: accept({ first: "Eve" }) } },
      ),
      /already used/,
    );
    await twoRoundsFinish(await twoRoundsSecond(again));
  });

  test("missing answers (requestState alone) → a new input_required", async () => {
    const first = expectInputRequired(await callTool(stack.url, "two_questions", {}));
    const again = expectInputRequired(await callTool(stack.url, "two_questions", {}, {}, { requestState: first.requestState }));
    assert.deepEqual(Object.keys(again.inputRequests).sort(), ["colour", "size"]);
    const result = expectComplete(
      await callTool(
        stack.url,
        "two_questions",
        {},
        {},
        {
          requestState: again.requestState,
          inputResponses: { colour: accept({ colour: "green" }), size: accept({ size: "S" }) },
        },
      ),
    );
    assert.equal(textOf(result), "colour=green, size=S");
  });

  test("extra unknown keys in inputResponses are ignored", async () => {
    const first = await twoRoundsFirst();
    const second = expectInputRequired(
      await callTool(
        stack.url,
        "two_rounds",
        {},
        {},
        {
          requestState: first.requestState,
          inputResponses: { first: accept({ first: "Ada" }), bogus: { ignored: true }, last: 7 },
        },
      ),
    );
    assert.deepEqual(Object.keys(second.inputRequests), ["last"]);
    await twoRoundsFinish(second);
  });

  test("malformed inputResponses (a number, null, an array, a string) → -32602; the held call still completes", async () => {
    const first = await twoRoundsFirst();
    for (const malformed of [42, null, [{ action: "accept", content: { first: "Eve" } }], "first"]) {
      const reply = await callTool(stack.url, "two_rounds", {}, {}, { requestState: first.requestState, inputResponses: malformed });
      expectInvalidParams(reply, /inputResponses/);
    }
    await twoRoundsFinish(await twoRoundsSecond(first));
  });

  test("a fresh call with inputResponses up front: a fitting answer is used without a round, the rest is asked", async () => {
    const first = await twoRoundsFirst();
    // `first` is answered up front (plus two keys nobody asks for); only `last` is asked.
    const second = expectInputRequired(
      await callTool(
        stack.url,
        "two_rounds",
        {},
        {},
        { inputResponses: { first: accept({ first: "Eve" }), bogus: 1, other: { x: true } } },
      ),
    );
    assert.deepEqual(Object.keys(second.inputRequests), ["last"]);
    const done = expectComplete(
      await callTool(
        stack.url,
        "two_rounds",
        {},
        {},
        { requestState: second.requestState, inputResponses: { last: accept({ last: "Ng" }) } },
      ),
    );
    assert.equal(textOf(done), "Hello, Eve Ng!");
    // An answer that does not fit (or a key nobody asks) is not used: the question is asked.
    const asked = expectInputRequired(
      await callTool(stack.url, "two_rounds", {}, {}, { inputResponses: { first: accept({ first: 12345 }) } }),
    );
    assert.deepEqual(Object.keys(asked.inputRequests), ["first"]);
    const wrongKey = expectInputRequired(
      await callTool(stack.url, "two_rounds", {}, {}, { inputResponses: { wrong_key: accept({ first: "Eve" }) } }),
    );
    assert.deepEqual(Object.keys(wrongKey.inputRequests), ["first"]);
    // The first round of the earlier call was not disturbed.
    await twoRoundsFinish(await twoRoundsSecond(first));
  });

  test("a bad answer (wrong content type) → -32602 saying what is wrong; the SAME requestState then works", async () => {
    const first = await twoRoundsFirst();
    const answered = nextEvent<ElicitationAnsweredEvent>(stack.legacy.events, "elicitation-answered", (e) => e.tool === "two_rounds", 400);
    answered.catch(() => undefined);
    const message = expectInvalidParams(
      await callTool(
        stack.url,
        "two_rounds",
        {},
        {},
        { requestState: first.requestState, inputResponses: { first: accept({ first: 42 }) } },
      ),
      /'first' must be a string/,
    );
    assert.match(message, /inputResponses\.first/);
    assert.match(message, /stays open/);
    await assert.rejects(answered, /timed out/, "the bad answer never went upstream");
    await twoRoundsFinish(await twoRoundsSecond(first));
  });

  test("a bad answer (action 'maybe') → -32602; the SAME requestState then works", async () => {
    const first = await twoRoundsFirst();
    expectInvalidParams(
      await callTool(
        stack.url,
        "two_rounds",
        {},
        {},
        { requestState: first.requestState, inputResponses: { first: { action: "maybe", content: { first: "Ada" } } } },
      ),
      /action must be/,
    );
    await twoRoundsFinish(await twoRoundsSecond(first));
  });

  test("a bad answer (missing required property, not an object) → -32602; the SAME requestState then works", async () => {
    const first = await twoRoundsFirst();
    expectInvalidParams(
      await callTool(stack.url, "two_rounds", {}, {}, { requestState: first.requestState, inputResponses: { first: accept({}) } }),
      /missing the required property 'first'/,
    );
    expectInvalidParams(
      await callTool(stack.url, "two_rounds", {}, {}, { requestState: first.requestState, inputResponses: { first: "Ada" } }),
      /JSON object/,
    );
    await twoRoundsFinish(await twoRoundsSecond(first));
  });

  test("a bad answer to one of two questions refuses the whole retry: nothing is delivered, both stay open", async () => {
    const first = expectInputRequired(await callTool(stack.url, "two_questions", {}));
    const answered = nextEvent<ElicitationAnsweredEvent>(
      stack.legacy.events,
      "elicitation-answered",
      (e) => e.tool === "two_questions",
      400,
    );
    answered.catch(() => undefined);
    expectInvalidParams(
      await callTool(
        stack.url,
        "two_questions",
        {},
        {},
        {
          requestState: first.requestState,
          inputResponses: { colour: accept({ colour: "red" }), size: accept({ size: "XXL" }) },
        },
      ),
      /'size' must be one of/,
    );
    await assert.rejects(answered, /timed out/, "the good answer was not delivered either");
    const result = expectComplete(
      await callTool(
        stack.url,
        "two_questions",
        {},
        {},
        {
          requestState: first.requestState,
          inputResponses: { colour: accept({ colour: "red" }), size: accept({ size: "L" }) },
        },
      ),
    );
    assert.equal(textOf(result), "colour=red, size=L");
  });
});

describe("inline MRTR: held calls expire", () => {
  const HOLD_TIMEOUT_MS = 300;
  let short: Stack;
  before(async () => {
    short = await startStack({ speed: 20, config: { mrtr: { holdTimeoutMs: HOLD_TIMEOUT_MS } } });
  });
  after(async () => {
    await short.close();
  });

  test("a held call nobody resumes is cancelled upstream after mrtr.holdTimeoutMs", async () => {
    const asked = Date.now();
    const cancelled = nextEvent<CancelledEvent>(short.legacy.events, "cancelled", (e) => e.tool === "two_rounds", HOLD_TIMEOUT_MS + 5000);
    const round = expectInputRequired(await callTool(short.url, "two_rounds", {}));
    assert.deepEqual(Object.keys(round.inputRequests), ["first"]);
    const event = await cancelled;
    assert.equal(event.tool, "two_rounds");
    assert.ok(Date.now() - asked >= HOLD_TIMEOUT_MS - 50, "not cancelled before the hold timeout");
  });

  test("an expired requestState → -32602 expired (and the legacy server saw 'cancelled')", async () => {
    const cancelled = nextEvent<CancelledEvent>(short.legacy.events, "cancelled", (e) => e.tool === "two_rounds", HOLD_TIMEOUT_MS + 5000);
    const round = expectInputRequired(await callTool(short.url, "two_rounds", {}));
    await cancelled;
    // Time passing is the point: the requestState's own expiry (exp) must be behind us, not only the hold.
    await new Promise((r) => setTimeout(r, 50));
    const reply = await callTool(
      short.url,
      "two_rounds",
      {},
      {},
      { requestState: round.requestState, inputResponses: { first: accept({ first: "Ada" }) } },
    );
    expectInvalidParams(reply, /expired/);
  });

  test("each round gets a fresh hold: a call answered in time keeps going", async () => {
    const first = expectInputRequired(await callTool(short.url, "two_rounds", {}));
    // Time passing is what is tested: each round answered after half the hold still keeps the call.
    await new Promise((r) => setTimeout(r, HOLD_TIMEOUT_MS / 2));
    const second = expectInputRequired(
      await callTool(
        short.url,
        "two_rounds",
        {},
        {},
        { requestState: first.requestState, inputResponses: { first: accept({ first: "Ada" }) } },
      ),
    );
    await new Promise((r) => setTimeout(r, HOLD_TIMEOUT_MS / 2));
    const result = expectComplete(
      await callTool(
        short.url,
        "two_rounds",
        {},
        {},
        { requestState: second.requestState, inputResponses: { last: accept({ last: "Lovelace" }) } },
      ),
    );
    assert.equal(textOf(result), "Hello, Ada Lovelace!");
  });
});
