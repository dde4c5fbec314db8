// The short requests to a 2026-07-28 backend share upstream.connections too. The v2 SDK server
// (our fixture, a real child process with its own tasks) behind a counting proxy of ours: alice's
// native task polled with 20 tasks/get at once reaches it at most 2 at a time (counted in flight at
// the proxy: open connections would count the idle ones of the uncapped pool that carried the call),
// over connections kept alive (the proxy keeps its own alive, so they are not closed after each
// answer), and every poll is answered.
// Run: node --import tsx --test test/e2e/realServers/modernQuickConnections.test.ts

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Gateway } from "../../../src/gateway.js";
import { startGatewayInFront } from "../../support/gatewayInFront.js";
import { TASKS_CAPS } from "../../support/mcpClient.js";
import { call, callTool, expectComplete, expectTask } from "../../support/realServerCalls.js";
import { type CountingProxy, startCountingProxy } from "../../support/servers/countingProxy.js";
import type { ServerProcess } from "../../support/servers/serverProcess.js";
import { startThirdPartyServer } from "../../support/servers/thirdParty.js";

const ALICE_TASKS = { token: "alice", capabilities: TASKS_CAPS };
const POLLS = 20;

describe("a 2026-07-28 backend's short requests share upstream.connections", () => {
  let server: ServerProcess;
  let proxy: CountingProxy;
  let gateway: Gateway;

  before(async () => {
    server = await startThirdPartyServer("modernOnly");
    proxy = await startCountingProxy(server.url, { keepAlive: true });
    gateway = await startGatewayInFront(proxy.url, { upstream: { subjectHeader: "X-User", connections: 2 } });
  });
  after(async () => {
    await gateway?.close();
    await proxy?.close();
    await server?.stop();
  });

  it(`${POLLS} tasks/get at once reach the backend at most 2 at a time (upstream.connections 2)`, async () => {
    const taskId = expectTask(await callTool(gateway.url, "native_report", {}, ALICE_TASKS)).taskId as string;
    const acceptedBefore = proxy.accepted();
    const polls = await Promise.all(Array.from({ length: POLLS }, () => call(gateway.url, "tasks/get", { taskId }, ALICE_TASKS)));
    for (const poll of polls) assert.equal(expectComplete(poll).taskId, taskId);
    assert.equal(proxy.count("tasks/get"), POLLS, "every poll reached the backend");
    const most = proxy.mostInFlight("tasks/get");
    assert.ok(most >= 1 && most <= 2, `the backend answered ${most} polls at once`);
    const opened = proxy.accepted() - acceptedBefore;
    assert.ok(opened <= 2, `the polls opened ${opened} new connections to the backend (kept alive: at most the cap)`);
  });
});
