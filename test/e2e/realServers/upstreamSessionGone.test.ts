// SPEC-upstream "Session gone": an upstream that lost taskgate's session answers HTTP 404, or, like
// server-everything, HTTP 400 "Bad Request: No valid session ID provided". Either way taskgate
// re-initialises and sends the refused request once more, so the client never sees it. Here
// server-everything is restarted on the same port (a real restart: every session it had is gone).
// Run: node --import tsx --test test/e2e/realServers/upstreamSessionGone.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Gateway } from "../../../src/gateway.js";
import { startGatewayInFront } from "../../support/gatewayInFront.js";
import { callTool, expectComplete, textOf } from "../../support/realServerCalls.js";
import type { ServerProcess } from "../../support/servers/serverProcess.js";
import { startThirdPartyServer } from "../../support/servers/thirdParty.js";

describe("server-everything: restarted under taskgate (its 400 'No valid session ID' means the session is gone)", () => {
  let everything: ServerProcess;
  let gateway: Gateway;

  before(async () => {
    everything = await startThirdPartyServer("everything");
    gateway = await startGatewayInFront(everything.url);
  });
  after(async () => {
    await gateway?.close();
    await everything?.stop();
  });

  test("after the upstream restarts, the next call re-opens a session and succeeds", async () => {
    const alice = { token: "alice", capabilities: {} };
    assert.equal(textOf(expectComplete(await callTool(gateway.url, "echo", { message: "before" }, alice))), "Echo: before");
    await everything.restart();
    const after = await callTool(gateway.url, "echo", { message: "after" }, alice);
    assert.equal(textOf(expectComplete(after)), "Echo: after");
  });
});
