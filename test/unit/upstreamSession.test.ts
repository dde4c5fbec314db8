// UpstreamSession over a scripted transport: the handshake, and where every server→client request
// goes — inside a call's exchange to that call, tagged with a followed task to its follower, on
// the standalone channel to the asking call holding the session or the one call in flight, and
// otherwise refused, never guessed.
// Run: node --import tsx --test test/unit/upstreamSession.test.ts

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createLogger } from "../../src/observability/logger.js";
import type { InputRequest, JsonObject } from "../../src/protocol/wire.js";
import type { CallContext } from "../../src/upstream/callContext.js";
import { ALL_KINDS, type LegacyClientCapabilities } from "../../src/upstream/capabilityProfile.js";
import type { JsonRpcMessage } from "../../src/upstream/transport.js";
import { UpstreamFailure } from "../../src/upstream/upstreamFailure.js";
import { type PingOutcome, UpstreamSession } from "../../src/upstream/upstreamSession.js";
import { exchangeOf, type Script, ScriptedTransport, STANDALONE, server } from "../support/scriptedTransport.js";
import { within } from "../support/waiting.js";

const log = createLogger("silent");
const TIMEOUTS = { initializeTimeoutMs: 2_000, pingIntervalMs: 60_000, pingTimeoutMs: 1_000 };

/** A call context that records what it was asked and answers `answer`. */
function context(name: string, asked: string[], answer: JsonObject = { action: "decline" }): CallContext {
  return {
    onInput: async (request: InputRequest) => {
      asked.push(`${name}:${request.method}`);
      return answer;
    },
  };
}

async function open(script: Script, profile: LegacyClientCapabilities = ALL_KINDS, askerOf?: () => CallContext | undefined) {
  const transport = new ScriptedTransport(server(script));
  const closed: UpstreamFailure[] = [];
  const session = await UpstreamSession.open({
    transport,
    profile,
    clientInfo: { name: "taskgate", version: "test" },
    timeouts: TIMEOUTS,
    log,
    onNotification: () => undefined,
    onClosed: (failure) => closed.push(failure),
    ...(askerOf ? { askerOf } : {}),
  });
  return { session, transport, closed };
}

/** A script that holds every tools/call open and records it, so the test decides when each ends. */
function holdingCalls() {
  const calls: JsonRpcMessage[] = [];
  const script: Script = (message) => {
    if (message.method === "tools/call") calls.push(message);
  };
  return { calls, script };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("UpstreamSession", () => {
  test("opening declares the profile in initialize, then sends notifications/initialized", async () => {
    const { session, transport } = await open(() => undefined, { sampling: {} });
    const initialize = transport.sentOf("initialize")[0];
    assert.deepEqual(initialize?.params?.capabilities, { sampling: {} });
    assert.equal(transport.sentOf("notifications/initialized").length, 1);
    assert.equal(session.info.serverInfo.name, "scripted");
  });

  test("a question inside a call's exchange goes to that call, even with other calls in flight", async () => {
    const asked: string[] = [];
    const { calls, script } = holdingCalls();
    const { session, transport } = await open(script);
    void session.request("tools/call", { name: "a" }, { context: context("a", asked) });
    void session.request("tools/call", { name: "b" }, { context: context("b", asked) });
    await tick();
    const answer = await transport.ask("elicitation/create", { message: "?" }, exchangeOf(calls[1]?.id as number));
    assert.deepEqual(answer.result, { action: "decline" });
    assert.deepEqual(asked, ["b:elicitation/create"]);
  });

  test("a standalone question goes to the one call in flight", async () => {
    const asked: string[] = [];
    const { script } = holdingCalls();
    const { session, transport } = await open(script);
    void session.request("tools/call", { name: "a" }, { context: context("a", asked) });
    await tick();
    const answer = await transport.ask("roots/list", {}, STANDALONE);
    assert.deepEqual(answer.result, { action: "decline" });
    assert.deepEqual(asked, ["a:roots/list"]);
  });

  test("a standalone question while two calls are in flight is refused (-32600) and reaches neither", async () => {
    const asked: string[] = [];
    const { script } = holdingCalls();
    const { session, transport } = await open(script);
    void session.request("tools/call", { name: "a" }, { context: context("a", asked) });
    void session.request("tools/call", { name: "b" }, { context: context("b", asked) });
    await tick();
    const answer = await transport.ask("elicitation/create", { message: "?" }, STANDALONE);
    assert.equal(answer.error?.code, -32600);
    assert.match(answer.error?.message ?? "", /2 calls of this client are in flight/);
    assert.deepEqual(asked, []);
  });

  test("a standalone question with no call in flight is refused", async () => {
    const { transport } = await open(() => undefined);
    const answer = await transport.ask("roots/list", {}, STANDALONE);
    assert.equal(answer.error?.code, -32600);
    assert.match(answer.error?.message ?? "", /no call of this session is in flight/);
  });

  test("the asking call holding the session gets standalone questions, whatever else is in flight", async () => {
    const asked: string[] = [];
    const asker = context("asker", asked);
    const { script } = holdingCalls();
    const { session, transport } = await open(script, ALL_KINDS, () => asker);
    void session.request("tools/call", { name: "a" }, { context: asker });
    void session.request("tools/list", {});
    await tick();
    await transport.ask("elicitation/create", { message: "?" }, STANDALONE);
    assert.deepEqual(asked, ["asker:elicitation/create"]);
  });

  test("a question tagged with a followed 2025-11-25 task goes to its follower, on any channel", async () => {
    const asked: string[] = [];
    const { script } = holdingCalls();
    const { session, transport } = await open(script);
    void session.request("tools/call", { name: "a" }, { context: context("a", asked) });
    void session.request("tools/call", { name: "b" }, { context: context("b", asked) });
    const stop = session.followTask("t-1", context("follower", asked));
    await tick();
    const tagged = { message: "?", _meta: { "io.modelcontextprotocol/related-task": { taskId: "t-1" } } };
    await transport.ask("elicitation/create", tagged, STANDALONE);
    assert.deepEqual(asked, ["follower:elicitation/create"]);
    stop();
  });

  test("a question of a kind the session did not declare is answered -32601", async () => {
    const asked: string[] = [];
    const { calls, script } = holdingCalls();
    const { session, transport } = await open(script, { elicitation: { form: {} } });
    void session.request("tools/call", { name: "a" }, { context: context("a", asked) });
    await tick();
    const answer = await transport.ask("sampling/createMessage", {}, exchangeOf(calls[0]?.id as number));
    assert.equal(answer.error?.code, -32601);
    assert.deepEqual(asked, []);
  });

  test("the upstream ending the session fails the calls in flight as upstream_lost and tells onClosed", async () => {
    const { script } = holdingCalls();
    const { session, transport, closed } = await open(script);
    const pending = session.request("tools/call", { name: "a" }, { context: context("a", []) });
    await tick();
    transport.end(new UpstreamFailure("session_gone", "the upstream forgot it"));
    await assert.rejects(pending, (error: unknown) => error instanceof UpstreamFailure && error.reason === "upstream_lost");
    assert.deepEqual(
      closed.map((f) => f.reason),
      ["session_gone"],
    );
    assert.equal(session.isEnded, true);
    await assert.rejects(session.request("tools/list", {}), (error: unknown) => (error as UpstreamFailure).reason === "session_gone");
  });
});

/** Blocks this process for `ms`: a real stall of its event loop, as a long GC or a starved machine makes. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: no timer, no socket is served meanwhile
  }
}

describe("UpstreamSession's ping verdict", () => {
  const PING = { initializeTimeoutMs: 2_000, pingIntervalMs: 100, pingTimeoutMs: 200 };

  /** A session whose upstream answers initialize and nothing else (no ping, no call); `onPingSent` runs as each ping arrives. */
  async function silentUpstream(onPingSent: (count: number) => void) {
    let pings = 0;
    const script: Script = (message, transport) => {
      if (message.method === "initialize") {
        transport.reply(message, { protocolVersion: "2025-11-25", capabilities: {}, serverInfo: { name: "scripted", version: "1" } });
      } else if (message.method === "ping") onPingSent(++pings);
    };
    const outcomes: PingOutcome[] = [];
    let missed: () => void = () => undefined;
    const ended = new Promise<void>((resolve) => (missed = resolve));
    const session = await UpstreamSession.open({
      transport: new ScriptedTransport(script),
      profile: ALL_KINDS,
      clientInfo: { name: "taskgate", version: "test" },
      timeouts: PING,
      log,
      onNotification: () => undefined,
      onClosed: () => undefined,
      onPing: (outcome) => {
        outcomes.push(outcome);
        if (outcome === "missed") missed();
      },
    });
    const call = session.request("tools/call", { name: "held" }, { context: context("held", []) });
    return { session, outcomes, call, ended: within(5_000, "a ping judged missed", ended) };
  }

  test("a ping this process stalled on for half its limit is not judged; the next silent one ends the session", async () => {
    const { session, outcomes, call, ended } = await silentUpstream((count) => {
      if (count === 1) stall(PING.pingTimeoutMs * 2); // the first ping's limit passes while this process does not run
    });
    await ended;
    // The second ping was sent at all: the session outlived the first one's verdict.
    assert.deepEqual(outcomes, ["stalled", "missed"]);
    assert.equal(session.isEnded, true);
    await assert.rejects(call, (error: unknown) => error instanceof UpstreamFailure && error.reason === "upstream_unresponsive");
  });

  test("a ping the upstream leaves unanswered while this process runs ends the session at once", async () => {
    const { session, outcomes, call, ended } = await silentUpstream(() => undefined);
    await ended;
    assert.deepEqual(outcomes, ["missed"]);
    assert.equal(session.isEnded, true);
    await assert.rejects(call, (error: unknown) => error instanceof UpstreamFailure && error.reason === "upstream_unresponsive");
  });
});
