// What the session model costs (issue 9): 1,000 identities calling once cost 1,000 upstream
// sessions, each initialized once; their second calls reuse them (no initialize round trip). The
// example legacy server reports every session it opens. (At upstream.maxSessions, 1,000 by
// default, the least recently used idle session would be closed to make room.)

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { resultOf, rpc } from "../support/mcpClient.js";
import { health, type Stack, startStack } from "../support/stack.js";

const IDENTITIES = 1000;

describe(`${IDENTITIES} identities through one taskgate`, () => {
  let stack: Stack;
  let opened = 0;
  before(async () => {
    stack = await startStack({ config: { upstream: { maxSessions: IDENTITIES + 100 } } }); // room for all: none evicted
    stack.legacy.events.on("session-opened", () => opened++);
    assert.equal((await fetch(new URL("/readyz", stack.url))).status, 200); // the readiness check's own session
  });
  after(() => stack.close());

  /** Every identity greets once, 32 at a time. */
  const greetAll = async (round: number) => {
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < IDENTITIES; i = next++) {
        const reply = await rpc(stack.url, "tools/call", { name: "greet", arguments: { name: `u${i}` } }, { token: `user${i}` });
        assert.match(
          JSON.stringify(resultOf(reply)?.content),
          new RegExp(`Hello, u${i}!`),
          `round ${round}, user${i}: ${JSON.stringify(reply.message)}`,
        );
      }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
  };

  test("each identity's first call opens one upstream session; its second call opens none", async () => {
    const base = opened;
    await greetAll(1);
    assert.equal(opened - base, IDENTITIES, "one session opened per identity");
    assert.equal((await health(stack.url)).upstreamSessions, IDENTITIES + 1, "+1: the readiness check's");
    await greetAll(2);
    assert.equal(opened - base, IDENTITIES, "the second calls reused the sessions: no initialize");
    assert.equal(stack.legacy.sessionCount(), IDENTITIES + 1);
  });
});
