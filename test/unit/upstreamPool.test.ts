// UpstreamPool (and UpstreamCall on it) over scripted transports: how many sessions an identity
// gets under each upstream.sessionsPer, what they declare, the retry after session_gone, the
// session bound, and what a call is told when the upstream asks for a capability its request did
// not declare.
// Run: node --import tsx --test test/unit/upstreamPool.test.ts

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createLogger } from "../../src/observability/logger.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import type { CallContext } from "../../src/upstream/callContext.js";
import { ALL_KINDS, type SessionsPer } from "../../src/upstream/capabilityProfile.js";
import type { JsonRpcMessage } from "../../src/upstream/transport.js";
import { UpstreamCall } from "../../src/upstream/upstreamCall.js";
import { UpstreamFailure } from "../../src/upstream/upstreamFailure.js";
import { UpstreamPool } from "../../src/upstream/upstreamPool.js";
import { exchangeOf, type Script, ScriptedTransport, STANDALONE, server } from "../support/scriptedTransport.js";
import { eventually } from "../support/waiting.js";

const log = createLogger("silent");
const FORMS = { elicitation: { form: {} } } as const;
const NONE = {};

function poolOf(script: Script, options: { sessionsPer?: SessionsPer; maxSessions?: number } = {}) {
  const transports: Array<{ owner: string; key: string; transport: ScriptedTransport }> = [];
  const pool = new UpstreamPool({
    connect: (owner, key) => {
      const transport = new ScriptedTransport(server(script), `session-${transports.length + 1}`);
      transports.push({ owner, key, transport });
      return transport;
    },
    ...(options.sessionsPer ? { sessionsPer: options.sessionsPer } : {}),
    log,
    clientInfo: { name: "taskgate", version: "test" },
    maxSessions: options.maxSessions ?? 10,
    sessionIdleMs: 60_000,
    requestTimeoutMs: 2_000,
    timeouts: { initializeTimeoutMs: 2_000, pingIntervalMs: 60_000, pingTimeoutMs: 1_000 },
  });
  return { pool, transports };
}

/** Answers tools/list and holds tools/call open; `calls` collects the held ones (with their transport). */
function upstream() {
  const calls: Array<{ message: JsonRpcMessage; transport: ScriptedTransport }> = [];
  const script: Script = (message, transport) => {
    if (message.method === "tools/list") transport.reply(message, { tools: [] });
    if (message.method === "tools/call") calls.push({ message, transport });
  };
  return { calls, script };
}

const quiet: CallContext = { onInput: async () => ({}) };
const waitFor = (check: () => boolean) => eventually(check, "the condition held", 1_000);

describe("UpstreamPool, sessionsPer identity (the default)", () => {
  test("one session per identity for lists and calls of every capability profile, declaring every kind", async () => {
    const { calls, script } = upstream();
    const { pool, transports } = poolOf(script);
    await pool.request("alice", NONE, "tools/list", {});
    await pool.request("alice", FORMS, "tools/list", {});
    const a = pool.call("alice", NONE, "tools/call", { name: "x" }, { context: quiet });
    const b = pool.call("alice", { sampling: {} }, "tools/call", { name: "y" }, { context: quiet });
    const c = pool.call("alice", FORMS, "tools/call", { name: "z" }, { context: quiet });
    await waitFor(() => calls.length === 3);
    assert.equal(transports.length, 1, "alice has one upstream session");
    assert.deepEqual(transports[0]?.transport.sentOf("initialize")[0]?.params?.capabilities, ALL_KINDS);
    assert.equal(pool.sessionKey(NONE), pool.sessionKey(FORMS));
    for (const { message, transport } of calls) transport.reply(message, { content: [] });
    await Promise.all([a, b, c]);
  });

  test("a second identity gets a session of its own", async () => {
    const { script } = upstream();
    const { pool, transports } = poolOf(script);
    await pool.request("alice", NONE, "tools/list", {});
    await pool.request("bob", NONE, "tools/list", {});
    assert.deepEqual(
      transports.map((t) => t.owner),
      ["alice", "bob"],
    );
    assert.equal(pool.sessionCount(), 2);
  });

  test("a request the upstream refused as session_gone is sent once more on a fresh session", async () => {
    const { script } = upstream();
    const { pool, transports } = poolOf(script);
    await pool.request("alice", NONE, "tools/list", {});
    const first = transports[0]?.transport as ScriptedTransport;
    first.refuseWith = new UpstreamFailure("session_gone", "unknown session");
    assert.deepEqual(await pool.request("alice", NONE, "tools/list", {}), { tools: [] });
    assert.equal(transports.length, 2, "a new session was opened");
    assert.equal(first.closed, true);
  });

  test("at maxSessions an idle session makes room; with none idle: upstream_sessions_exhausted naming the option", async () => {
    const { calls, script } = upstream();
    const { pool, transports } = poolOf(script, { maxSessions: 1 });
    await pool.request("alice", NONE, "tools/list", {});
    await pool.request("bob", NONE, "tools/list", {}); // alice's idle session is evicted
    assert.equal(transports[0]?.transport.closed, true);
    const running = pool.call("bob", NONE, "tools/call", { name: "x" }, { context: quiet });
    await waitFor(() => calls.length === 1);
    await assert.rejects(
      pool.request("carol", NONE, "tools/list", {}),
      (error: unknown) =>
        error instanceof UpstreamFailure && error.reason === "upstream_sessions_exhausted" && /upstream\.maxSessions/.test(error.message),
    );
    calls[0]?.transport.reply(calls[0].message, {});
    await running;
  });
});

describe("UpstreamPool, sessionsPer capabilities", () => {
  test("one session per capability profile, each declaring its own; concurrent asking calls get one each", async () => {
    const { calls, script } = upstream();
    const { pool, transports } = poolOf(script, { sessionsPer: "capabilities" });
    await pool.request("alice", NONE, "tools/list", {});
    const a = pool.call("alice", FORMS, "tools/call", { name: "a" }, { context: quiet });
    const b = pool.call("alice", FORMS, "tools/call", { name: "b" }, { context: quiet });
    await waitFor(() => calls.length === 2);
    assert.deepEqual(
      transports.map((t) => t.key),
      ["none", "form", "form"],
    );
    assert.deepEqual(transports[1]?.transport.sentOf("initialize")[0]?.params?.capabilities, FORMS);
    assert.notEqual(pool.sessionKey(NONE), pool.sessionKey(FORMS));
    for (const { message, transport } of calls) transport.reply(message, {});
    await Promise.all([a, b]);
  });

  test("a standalone question goes to the asking call holding the session, even while a list runs there", async () => {
    const asked: string[] = [];
    const { calls, script } = upstream();
    const { pool } = poolOf(script, { sessionsPer: "capabilities" });
    const asker: CallContext = {
      onInput: async (request) => {
        asked.push(request.method);
        return { action: "decline" };
      },
    };
    const running = pool.call("alice", FORMS, "tools/call", { name: "a" }, { context: asker });
    await waitFor(() => calls.length === 1);
    const { transport, message } = calls[0] as { message: JsonRpcMessage; transport: ScriptedTransport };
    await transport.ask("elicitation/create", { message: "?" }, STANDALONE);
    assert.deepEqual(asked, ["elicitation/create"]);
    transport.reply(message, {});
    await running;
  });
});

describe("UpstreamCall: a question the request did not declare", () => {
  const target = (pool: UpstreamPool, profile: JsonObject) => ({ pool, owner: "alice", profile, asksProgress: true });

  test("the upstream is told 'Method not found'; when the call then fails, the client gets -32021 naming the capability", async () => {
    let answer: JsonRpcMessage | undefined;
    const script: Script = (message, transport) => {
      if (message.method !== "tools/call") return;
      void transport.ask("elicitation/create", { message: "Name?", requestedSchema: {} }, exchangeOf(message.id as number)).then((a) => {
        answer = a;
        transport.reply(message, { isError: true, content: [{ type: "text", text: "MCP error -32601: Method not found" }] });
      });
    };
    const { pool } = poolOf(script);
    const call = new UpstreamCall(target(pool, { sampling: {} }), "tools/call", { name: "ask" }, log);
    let watched = 0;
    call.watch({ question: () => (watched += 1) });
    const outcome = await call.outcome;
    assert.deepEqual(answer?.error, { code: -32601, message: "Method not found" });
    assert.equal(watched, 0, "no holder is shown the question");
    assert.equal(outcome.kind, "error");
    if (outcome.kind !== "error") return;
    assert.equal(outcome.error.code, -32021);
    assert.deepEqual((outcome.error.data as JsonObject).requiredCapabilities, { elicitation: { form: {} } });
    assert.match(outcome.error.message, /elicitation\/create/);
  });

  test("an undeclared question only inferred to be the call's (standalone, the one call in flight) does not turn its failure into -32021", async () => {
    let answer: JsonRpcMessage | undefined;
    const script: Script = (message, transport) => {
      if (message.method !== "tools/call") return;
      void transport.ask("roots/list", {}, STANDALONE).then((a) => {
        answer = a;
        transport.fail(message, -32602, "Resource not found");
      });
    };
    const { pool } = poolOf(script);
    const outcome = await new UpstreamCall(target(pool, NONE), "tools/call", { name: "read" }, log).outcome;
    assert.deepEqual(answer?.error, { code: -32601, message: "Method not found" });
    assert.equal(outcome.kind, "error");
    if (outcome.kind === "error") assert.equal(outcome.error.code, -32602, "the call's own error stands");
  });

  test("a server that carries on after the refusal keeps its result", async () => {
    const script: Script = (message, transport) => {
      if (message.method !== "tools/call") return;
      void transport.ask("sampling/createMessage", { messages: [] }, exchangeOf(message.id as number)).then(() => {
        transport.reply(message, { content: [{ type: "text", text: "done without a model" }] });
      });
    };
    const { pool } = poolOf(script);
    const outcome = await new UpstreamCall(target(pool, FORMS), "tools/call", { name: "ask" }, log).outcome;
    assert.deepEqual(outcome, { kind: "result", result: { content: [{ type: "text", text: "done without a model" }] } });
  });

  test("a declared question reaches the call's holders", async () => {
    const script: Script = (message, transport) => {
      if (message.method !== "tools/call") return;
      void transport.ask("elicitation/create", { message: "Name?" }, exchangeOf(message.id as number)).then((a) => {
        transport.reply(message, { content: [{ type: "text", text: JSON.stringify(a.result) }] });
      });
    };
    const { pool } = poolOf(script);
    const call = new UpstreamCall(target(pool, FORMS), "tools/call", { name: "ask" }, log);
    call.watch({ question: (question) => question.answer({ action: "accept", content: { name: "Ada" } }) });
    const outcome = await call.outcome;
    assert.equal(outcome.kind, "result");
    if (outcome.kind === "result") assert.match(JSON.stringify(outcome.result), /Ada/);
  });
});
