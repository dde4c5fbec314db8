// Issue 9, problem 6: a client that leaves while taskgate is still opening the upstream session
// for its call stops that call: the upstream never runs the tool, and nothing stays held. FastMCP
// takes about a second to answer each initialize (it polls for the client's capabilities first),
// so a client that aborts 200 ms after sending leaves during the opening. Our FastMCP fixture
// prints a stdout line whenever a tool starts: that line is the upstream's own testimony.
// Run: node --import tsx --test test/e2e/realServers/leaveWhileSessionOpens.test.ts

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Gateway } from "../../../src/gateway.js";
import type { JsonObject } from "../../../src/protocol/wire.js";
import { startGatewayInFront } from "../../support/gatewayInFront.js";
import { TASKS_CAPS } from "../../support/mcpClient.js";
import { call, callTool, expectComplete, textOf } from "../../support/realServerCalls.js";
import type { ServerProcess } from "../../support/servers/serverProcess.js";
import { startThirdPartyServer } from "../../support/servers/thirdParty.js";
import { health } from "../../support/stack.js";

/** How long after sending the client leaves; well inside FastMCP's ~1 s initialize. */
const LEAVE_AFTER_MS = 200;

const startLine = (tag: string) => (line: string) => line.startsWith("{") && line.includes('"fixture":"tool-start"') && line.includes(tag);

describe("FastMCP (our fixture): a slow initialize", () => {
  let server: ServerProcess;
  let gateway: Gateway;

  before(async () => {
    server = await startThirdPartyServer("fastmcp");
    // A long auto window: a call that declared tasks waits up to 5 s for its result before a task
    // is handed out, so the session opening falls inside that wait.
    gateway = await startGatewayInFront(server.url, { tasks: { autoAfterMs: 5_000 } });
  });
  after(async () => {
    await gateway?.close();
    await server?.stop();
  });

  /** Sends tools/call note as a fresh caller, leaves after LEAVE_AFTER_MS, then proves the upstream never ran it. */
  async function leaveDuringOpening(capabilities: JsonObject): Promise<void> {
    // The tool catalog is known (another caller listed the tools), so the call goes straight to
    // opening an upstream session: a fresh identity with a capability profile nobody used yet.
    const listed = await call(gateway.url, "tools/list", {}, { token: "someone-else", capabilities: {} });
    assert.ok(listed.message.result, JSON.stringify(listed.message));
    const who = { token: `leaver-${randomUUID()}`, capabilities };
    const tag = randomUUID();
    const from = server.lines.length;
    const leave = new AbortController();
    const timer = setTimeout(() => leave.abort(), LEAVE_AFTER_MS);
    await assert.rejects(
      callTool(gateway.url, "note", { tag }, who, { signal: leave.signal }),
      { name: "AbortError" },
      "the client left before any reply",
    );
    clearTimeout(timer);

    // The same caller again: once this call ran upstream, the opening the first one waited for is over.
    const control = randomUUID();
    assert.equal(textOf(expectComplete(await callTool(gateway.url, "note", { tag: control }, who))), `noted ${control}`);
    await server.waitForLine(startLine(control), { from, timeoutMs: 5_000 });
    await assert.rejects(
      server.waitForLine(startLine(tag), { from, timeoutMs: 1_500 }),
      /no output line matching/,
      "the upstream ran the tool of a client that had left",
    );
    const held = await health(gateway.url);
    assert.equal(held.heldCalls, 0, `nothing is held after the client left: ${JSON.stringify(held)}`);
    assert.equal(held.heldTasks, 0, `no task was made for a client that left: ${JSON.stringify(held)}`);
  }

  test("a client that declared the tasks extension leaves while its upstream session is still opening: the upstream never runs the tool", async () => {
    await leaveDuringOpening({ ...TASKS_CAPS, sampling: {} });
  });

  test("a client without the tasks extension leaves while its upstream session is still opening: the upstream never runs the tool", async () => {
    await leaveDuringOpening({ roots: {} });
  });
});
