// Liveness that reads the signs of life, and a bound on the calls one session carries, against a
// FAKE upstream (support/servers/latePingServer.ts: it never answers ping while its `ticker` tool streams
// progress — busy but alive, which no real server does on demand):
// - a call whose stream keeps bringing progress (the client asked for it) finishes with its result
//   although every ping went unanswered (each late ping is logged, the session is kept, and no late
//   ping is cancelled: the fake takes no cancel either, and an undelivered cancel would end the session);
// - an inline call whose progress nobody reads is sent without a progressToken, so it brings none: on
//   that session nothing else is heard, so the first unanswered ping ends the session and the call
//   fails with upstream_unresponsive (decisions/0039: the price of not asking);
// - a short request (completion/complete) that outlives its limit, whose cancel the fake does not
//   take either, is counted and logged as an undelivered cancel, and its session kept: the call
//   streaming on it finishes;
// - with upstream.maxCallsPerSession 2, a third call of the same identity at once runs on a second
//   upstream session, and all three finish; that extra session is closed soon after it fell idle.
// (A session that really stops — nothing at all from the upstream — still ends with
// upstream_unresponsive: upstreamTimeLimits.test.ts, with a SIGSTOPped real server.)
// Run: node --import tsx --test test/e2e/sessionLiveness.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { rpcWithin } from "../support/boundedRpc.js";
import { closeAll } from "../support/closeAll.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { assertErrorEnding } from "../support/expectError.js";
import { type FaultGateway, startFaultGateway } from "../support/inProcessGateway.js";
import { ANSWER_WITHIN_MS, UPSTREAM_LIMITS } from "../support/limits.js";
import { resultOf } from "../support/mcpClient.js";
import { type LatePingServer, startLatePingServer } from "../support/servers/latePingServer.js";
import { eventually, within } from "../support/waiting.js";

failIfStillRunning();

const textOf = (result: Record<string, unknown>) => (result.content as Array<{ text: string }>)[0]?.text;

describe("a busy upstream that answers no ping but keeps streaming (fake)", () => {
  let fake: LatePingServer;
  let gw: FaultGateway;
  before(async () => {
    fake = await startLatePingServer();
    gw = await startFaultGateway(fake.url, {
      // One cancel attempt: a cancel sent for a late ping would be given up (and its session ended) within the call.
      upstream: { ...UPSTREAM_LIMITS, pingIntervalMs: 400, pingTimeoutMs: 1_000, maxCallsPerSession: 2, cancelAttempts: 1 },
    });
  });
  after(() =>
    closeAll(
      () => gw?.close(),
      () => fake?.close(),
    ),
  );

  test("a call whose stream brings progress is not failed by late pings; it ends with its result", async () => {
    const pingsBefore = fake.pings;
    const reply = await rpcWithin(
      ANSWER_WITHIN_MS,
      gw.url,
      "tools/call",
      { name: "ticker", arguments: { ms: 3_000, everyMs: 100 } },
      { meta: { progressToken: "liveness" } },
    );
    assert.ok(reply.message.result, `the call failed: ${JSON.stringify(reply.message)}`);
    assert.ok(
      reply.events.some((event) => event.method === "notifications/progress"),
      "the client got the progress it asked for",
    );
    assert.match(String(textOf(resultOf(reply))), /^ticked \d+$/);
    assert.ok(fake.pings - pingsBefore >= 2, `taskgate kept pinging (${fake.pings - pingsBefore} pings left unanswered)`);
    assert.ok(gw.logs.mentioning("upstream.ping.late").length >= 1, "each late ping is logged");
    assert.equal(gw.logs.mentioning("upstream.unresponsive").length, 0, "the session was never called dead");
    assert.equal(fake.cancels, 0, "no late ping was cancelled");
  });

  test("a short request past its limit whose cancel goes undelivered ends no session: the call beside it finishes", async () => {
    const cancelsBefore = fake.cancels;
    const undelivered = () => gw.logs.lines.filter((line) => line.event === "upstream.cancel.undelivered");
    const undeliveredBefore = undelivered().length;
    const callsBefore = fake.calls;
    const call = rpcWithin(
      ANSWER_WITHIN_MS,
      gw.url,
      "tools/call",
      { name: "ticker", arguments: { ms: 5_000, everyMs: 100 } },
      { meta: { progressToken: "beside" } },
    );
    // The request joins the session while the call streams there.
    await eventually(() => fake.calls > callsBefore, "the call reaches the upstream", ANSWER_WITHIN_MS);
    const complete = await rpcWithin(ANSWER_WITHIN_MS, gw.url, "completion/complete", {
      ref: { type: "ref/prompt", name: "any" },
      argument: { name: "x", value: "y" },
    });
    assert.match(JSON.stringify(complete.message.error), /upstream\.requestTimeoutMs/, JSON.stringify(complete.message));
    await eventually(() => undelivered().length > undeliveredBefore, "the request's cancel is given up", ANSWER_WITHIN_MS);
    assert.equal(undelivered().at(-1)?.method, "completion/complete", "the undelivered cancel is logged with the request's method");
    const reply = await call;
    assert.ok(reply.message.result, `the call failed: ${JSON.stringify(reply.message)}`);
    assert.equal(fake.cancels - cancelsBefore, 1, "the request was cancelled upstream (the fake took no cancel)");
    assert.equal(gw.logs.mentioning("upstream.session.ended.cancel").length, 0, "no session was ended for it");
  });

  test("beyond upstream.maxCallsPerSession, the identity's next call runs on another session", async () => {
    const sessionsBefore = fake.sessions;
    const closed = fake.nextDelete();
    const calls = await Promise.all(
      [1, 2, 3].map(() => rpcWithin(ANSWER_WITHIN_MS, gw.url, "tools/call", { name: "ticker", arguments: { ms: 600, everyMs: 100 } })),
    );
    for (const reply of calls) assert.ok(reply.message.result, JSON.stringify(reply.message));
    assert.equal(fake.sessions - sessionsBefore, 1, "one more upstream session was opened for the third call");
    // The extra session closes about 5 s after it fell idle (the identity's first one stays for upstream.sessionIdleMs).
    await within(ANSWER_WITHIN_MS, "the extra session to be closed", closed);
  });

  test("an inline call whose progress nobody reads is asked for none, so late pings end its session: upstream_unresponsive", async () => {
    const unresponsiveBefore = gw.logs.mentioning("upstream.unresponsive").length;
    // A new identity: its first call opens its session (the full road), the next runs on it (the short road).
    const quick = await rpcWithin(ANSWER_WITHIN_MS, gw.url, "tools/call", { name: "ticker", arguments: { ms: 50 } }, { token: "dave" });
    assert.ok(quick.message.result, JSON.stringify(quick.message));
    assert.deepEqual(fake.lastTickerToken, { asked: false }, "the first call was sent without a progressToken");
    const reply = await rpcWithin(
      ANSWER_WITHIN_MS,
      gw.url,
      "tools/call",
      { name: "ticker", arguments: { ms: 5_000, everyMs: 100 } },
      { token: "dave" },
    );
    assert.deepEqual(fake.lastTickerToken, { asked: false }, "the long call was sent without a progressToken");
    assertErrorEnding(reply, { http: 504, reason: "upstream_unresponsive", message: /^Upstream stopped answering/ }, "the silent call");
    assert.equal(gw.logs.mentioning("upstream.unresponsive").length - unresponsiveBefore, 1, "its session was called dead once");
  });
});
