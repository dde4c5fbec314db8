// SPEC-upstream "Session gone": an upstream that lost taskgate's session answers HTTP 404, or, like
// server-everything, HTTP 400 "Bad Request: No valid session ID provided". Either way taskgate
// re-initialises and sends the refused request once more, so the client never sees it. Here
// server-everything is restarted on the same port (a real restart: every session it had is gone).
// Run: node --import tsx --test test/e2e/realServers/upstreamSessionGone.test.ts

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { inFrontOf } from "../../support/gatewayInFront.js";
import { callTool, expectComplete, textOf } from "../../support/realServerCalls.js";

describe("server-everything: restarted under taskgate (its 400 'No valid session ID' means the session is gone)", () => {
  const front = inFrontOf("everything");

  test("after the upstream restarts, the next call re-opens a session and succeeds", async () => {
    const alice = { token: "alice", capabilities: {} };
    assert.equal(textOf(expectComplete(await callTool(front.gateway.url, "echo", { message: "before" }, alice))), "Echo: before");
    await front.server.restart();
    const after = await callTool(front.gateway.url, "echo", { message: "after" }, alice);
    assert.equal(textOf(expectComplete(after)), "Echo: after");
  });
});
