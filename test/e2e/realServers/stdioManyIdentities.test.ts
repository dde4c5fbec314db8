// Issue 13: 50 identities at once in front of a stdio server: 50 server-everything processes (one
// per identity, none shared), every call completes, and shutdown leaves none. The figures (time,
// RSS per process) come from `npm run bench -- stdio`.
// Run: node --import tsx --test test/e2e/realServers/stdioManyIdentities.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Gateway } from "../../../src/gateway.js";
import { startGatewayOnCommand } from "../../support/gatewayInFront.js";
import { isRunning } from "../../support/processes.js";
import { callTool, expectComplete, textOf } from "../../support/realServerCalls.js";
import { STDIO_COMMANDS } from "../../support/servers/thirdParty.js";

const IDENTITIES = 50;

describe(`${IDENTITIES} identities at once in front of a stdio server`, () => {
  let gateway: Gateway;

  before(async () => {
    gateway = await startGatewayOnCommand(STDIO_COMMANDS.everything(), {
      upstream: { maxProcesses: IDENTITIES + 1, initializeTimeoutMs: 60_000, stopGraceMs: 500 },
      // The 50 requests come from this process, whose event loop also spawns the 50 servers (each spawn
      // blocks it for a while): on a loaded machine a request's headers were once read after the 10 s
      // default and it got Node's 408. The limits are given the same room as the servers' start.
      http: { headersTimeoutMs: 60_000, requestTimeoutMs: 60_000 },
    });
    await fetch(new URL("/readyz", gateway.url));
  });
  after(async () => {
    await gateway?.close();
  });

  test(`each gets a process of its own and every call completes; shutdown stops all ${IDENTITIES}`, { timeout: 120_000 }, async () => {
    const before = new Set(gateway.upstreamProcesses?.() ?? []);
    const started = Date.now();
    const results = await Promise.all(
      Array.from({ length: IDENTITIES }, (_, i) =>
        callTool(gateway.url, "echo", { message: `user-${i}` }, { token: `user-${i}`, capabilities: {} }, { timeoutMs: 90_000 }),
      ),
    );
    results.forEach((reply, i) => assert.match(textOf(expectComplete(reply)), new RegExp(`user-${i}\\b`)));
    const pids = (gateway.upstreamProcesses?.() ?? []).filter((pid) => !before.has(pid));
    assert.equal(pids.length, IDENTITIES, `one process per identity (${Date.now() - started} ms for all)`);
    await gateway.close();
    assert.deepEqual(pids.filter(isRunning), []);
  });
});
