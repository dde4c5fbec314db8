// Inline MRTR rounds across instances, in front of the real example legacy server: two taskgates
// (and, for a death, a third as a real child process) share one real Redis (fresh key prefix) and
// one mrtr.secret. Every round of a call may reach any instance; the instance holding the upstream
// call (named in the requestState) resumes it. Covered: a second round asked through another
// instance, a replayed state, an answer that does not fit (checked by the holder, the question
// stays open), an open question the retry did not declare (-32021, HTTP 400), policy auto (the
// answer's retry gets a task held by the holder), a retrying client that leaves (the holder
// cancels the call upstream), and a holder that dies while the retry waits (-32602 within the
// link's silence limit).
// Run: node --import tsx --test test/e2e/mrtrAcrossInstances.test.ts

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { LegacyServer } from "../../examples/legacy-server/server.js";
import type { CancelledEvent, ToolStartedEvent } from "../../examples/legacy-server/state.js";
import type { Gateway } from "../../src/gateway.js";
import { ErrorCode } from "../../src/protocol/errors.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { killHard, spawnGateway } from "../support/gatewayChild.js";
import { errorOf, type RpcReply, resultOf, rpc } from "../support/mcpClient.js";
import { needsRedis } from "../support/redisServer.js";
import { type SharedRedisStack, startSharedRedisStack } from "../support/sharedRedisStack.js";
import { health } from "../support/stack.js";
import { assertRpcError, getTask, hasStatus, TASKS_AND_FORMS, waitForTask } from "../support/tasks.js";
import { eventually, nextEvent } from "../support/waiting.js";

const SECRET = randomBytes(32).toString("hex");
const FORMS = { elicitation: {} };
/** ask_then_work's work after the answer, for calls that must still be running (speed 1). */
const LONG_MS = 120_000;

const accept = (content: JsonObject) => ({ action: "accept", content });

function callTool(
  url: string,
  name: string,
  args: JsonObject,
  capabilities: JsonObject = FORMS,
  extra: JsonObject = {},
  signal?: AbortSignal,
): Promise<RpcReply> {
  return rpc(url, "tools/call", { name, arguments: args, ...extra }, { capabilities, ...(signal ? { signal } : {}) });
}

function round(reply: RpcReply): { requestState: string; keys: string[] } {
  const result = resultOf(reply);
  assert.equal(result?.resultType, "input_required", JSON.stringify(reply.message));
  return { requestState: result.requestState as string, keys: Object.keys(result.inputRequests as JsonObject).sort() };
}

const textOf = (reply: RpcReply) => ((resultOf(reply)?.content ?? []) as { text?: string }[]).map((c) => c.text ?? "").join("");

describe("inline MRTR rounds reaching any of several instances", needsRedis, () => {
  let stack: SharedRedisStack;
  let legacy: LegacyServer;
  let a: Gateway;
  let b: Gateway;

  before(async () => {
    // tasks.autoAfterMs well past the question's arrival on a loaded machine: a first round must be a round, not a task
    // (its retry with tasks declared becomes a task whatever the window).
    const config = { mrtr: { secret: SECRET }, shutdown: { graceMs: 0 }, tasks: { autoAfterMs: 15_000 } };
    stack = await startSharedRedisStack({ speed: 1, leaseMs: 3_000, config });
    ({ legacy, a, b } = stack);
  });

  after(() => stack.close());

  test("two_rounds: round 1 on A, round 2 through B asks the next question, a replay is refused, round 3 through B completes", async () => {
    const first = round(await callTool(a.url, "two_rounds", {}));
    assert.deepEqual(first.keys, ["first"]);
    const second = round(
      await callTool(b.url, "two_rounds", {}, FORMS, {
        requestState: first.requestState,
        inputResponses: { first: accept({ first: "Ada" }) },
      }),
    );
    assert.deepEqual(second.keys, ["last"]);
    const replay = await callTool(b.url, "two_rounds", {}, FORMS, {
      requestState: first.requestState,
      inputResponses: { first: accept({ first: "Eve" }) },
    });
    assert.match(assertRpcError(replay, ErrorCode.InvalidParams).message, /already used/);
    const done = await callTool(b.url, "two_rounds", {}, FORMS, {
      requestState: second.requestState,
      inputResponses: { last: accept({ last: "Lovelace" }) },
    });
    assert.equal(textOf(done), "Hello, Ada Lovelace!");
    assert.equal((await health(a.url)).heldCalls, 0, "A let go of the call once it finished");
  });

  test("an answer that does not fit its question is refused by the holder (-32602 naming the rule); the question stays open", async () => {
    const first = round(await callTool(a.url, "two_rounds", {}));
    const bad = await callTool(b.url, "two_rounds", {}, FORMS, {
      requestState: first.requestState,
      inputResponses: { first: accept({ first: 42 }) },
    });
    assert.match(assertRpcError(bad, ErrorCode.InvalidParams).message, /inputResponses\.first: .*'first' must be a string/);
    const second = round(
      await callTool(b.url, "two_rounds", {}, FORMS, {
        requestState: first.requestState,
        inputResponses: { first: accept({ first: "Ada" }) },
      }),
    );
    assert.deepEqual(second.keys, ["last"]);
    const done = await callTool(a.url, "two_rounds", {}, FORMS, {
      requestState: second.requestState,
      inputResponses: { last: accept({ last: "Byron" }) },
    });
    assert.equal(textOf(done), "Hello, Ada Byron!");
  });

  test("a question left open that the retry through B did not declare: -32021 with HTTP 400, and the call still completes", async () => {
    const both = round(await callTool(a.url, "two_questions", {}));
    assert.deepEqual(both.keys.length, 2);
    const [colourKey, sizeKey] = both.keys.includes("colour") ? ["colour", "size"] : both.keys;
    const undeclared = await callTool(
      b.url,
      "two_questions",
      {},
      {},
      { requestState: both.requestState, inputResponses: { [colourKey!]: accept({ colour: "red" }) } },
    );
    assertRpcError(undeclared, ErrorCode.MissingRequiredClientCapability, 400);
    const done = await callTool(b.url, "two_questions", {}, FORMS, {
      requestState: both.requestState,
      inputResponses: { [colourKey!]: accept({ colour: "red" }), [sizeKey!]: accept({ size: "M" }) },
    });
    assert.equal(textOf(done), "colour=red, size=M");
  });

  test("policy auto, tasks declared: the answer's retry through B gets a task that A holds, and it completes with the answer", async () => {
    const first = round(await callTool(a.url, "ask_then_work", { ms: 500 }, TASKS_AND_FORMS));
    const created = resultOf(
      await callTool(b.url, "ask_then_work", { ms: 500 }, TASKS_AND_FORMS, {
        requestState: first.requestState,
        inputResponses: { name: accept({ name: "Alice" }) },
      }),
    );
    assert.equal(created.resultType, "task", JSON.stringify(created));
    const taskId = created.taskId as string;
    assert.equal((await health(a.url)).heldTasks, 1, "the task runs where the call is: on A");
    assert.equal((await health(b.url)).heldTasks, 0);
    const done = await waitForTask(b.url, taskId, hasStatus("completed"), { timeoutMs: 10_000 });
    assert.match(JSON.stringify(done.result), /Hello, Alice!/);
    assert.equal((await getTask(a.url, taskId)).status, "completed");
  });

  test("the client of a retry sent to B goes away while the call works: A cancels the call upstream", async () => {
    const started = nextEvent<ToolStartedEvent>(legacy.events, "tool-started", (e) => e.tool === "ask_then_work");
    const first = round(await callTool(a.url, "ask_then_work", { ms: LONG_MS }));
    const { requestId } = await started;
    const cancelled = nextEvent<CancelledEvent>(
      legacy.events,
      "cancelled",
      (e) => e.tool === "ask_then_work" && e.requestId === requestId,
      10_000,
    );
    const leave = new AbortController();
    const retry = callTool(
      b.url,
      "ask_then_work",
      { ms: LONG_MS },
      FORMS,
      { requestState: first.requestState, inputResponses: { name: accept({ name: "Bo" }) } },
      leave.signal,
    );
    setTimeout(() => leave.abort(), 800); // past the JSON window: B answers with a stream by then
    await assert.rejects(retry, { name: "AbortError" });
    await cancelled;
    await eventually(async () => (await health(a.url)).heldCalls === 0, "A let go of the cancelled call");
    assert.equal((await health(a.url)).heldCalls, 0, "A let go of the cancelled call");
  });

  test("the instance holding the call dies (SIGKILL) while a retry through B waits: B ends it with -32602 naming the cause", async () => {
    const child = await spawnGateway(
      ["--upstream", legacy.url, "--port", "0", "--auth", "demo", ...stack.storeArgs],
      { TASKGATE_STORE_PREFIX: stack.prefix, TASKGATE_STORE_LEASE_MS: "1000", TASKGATE_MRTR_SECRET: SECRET },
      stack.children,
    );
    const first = round(await callTool(child.url, "ask_then_work", { ms: LONG_MS }));
    const answered = nextEvent(legacy.events, "elicitation-answered", (e: { tool: string }) => e.tool === "ask_then_work", 10_000);
    const retry = callTool(b.url, "ask_then_work", { ms: LONG_MS }, FORMS, {
      requestState: first.requestState,
      inputResponses: { name: accept({ name: "Cy" }) },
    });
    await answered; // the child delivered the answer upstream; the call now works for LONG_MS
    await killHard(child.process);
    const killedAt = Date.now();
    const reply = await retry;
    const waited = Date.now() - killedAt;
    const error = errorOf(reply);
    assert.equal(error?.code, ErrorCode.InvalidParams, JSON.stringify(reply.message));
    assert.match(error.message, /is gone: the taskgate instance holding it stopped or does not answer/);
    assert.deepEqual(error.data, { reason: "holder_gone" });
    assert.ok(waited < 6_000, `B gave up ${waited} ms after the holder died`);
  });
});
