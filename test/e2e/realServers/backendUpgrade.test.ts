// A backend that upgrades under a running taskgate: the example legacy server on a fixed port is
// killed while a task runs on it, and our 2026-only v2 SDK server (test/support/fixtures/modernServer.ts)
// takes its place on the same port. The task started in the old era ends with a named failure;
// the next request finds the backend modern (probed again, no taskgate restart), and discover and
// the metrics say so.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Gateway } from "../../../src/gateway.js";
import { REASONS } from "../../../src/protocol/reasons.js";
import type { JsonObject } from "../../../src/protocol/wire.js";
import { startGatewayInFront } from "../../support/gatewayInFront.js";
import { TASKS_CAPS } from "../../support/mcpClient.js";
import { call, callTool, expectComplete, expectTask, textOf } from "../../support/realServerCalls.js";
import { LegacyProcess } from "../../support/servers/legacyProcess.js";
import { type ServerProcess, startServerProcess } from "../../support/servers/serverProcess.js";
import { LAUNCHES } from "../../support/servers/thirdParty.js";
import { pollTask } from "../../support/tasks.js";

const ALICE_TASKS = { token: "alice", capabilities: TASKS_CAPS };

describe("a backend that moves from the session protocol to 2026-07-28 while taskgate runs", () => {
  let legacy: LegacyProcess;
  let modern: ServerProcess | undefined;
  let gateway: Gateway;

  before(async () => {
    legacy = await LegacyProcess.start();
    gateway = await startGatewayInFront(legacy.url, { upstream: { subjectHeader: "X-User" }, tasks: { autoAfterMs: 100 } });
  });
  after(async () => {
    await gateway?.close();
    await modern?.stop();
    await legacy?.close();
  });

  it("fails the old era's task with a named reason, and serves the next request in 2026-07-28", async () => {
    const before = expectComplete(await call(gateway.url, "server/discover"));
    assert.equal(((before._meta as JsonObject)["dev.taskgate/backend"] as JsonObject).era, "legacy");
    const task = expectTask(await callTool(gateway.url, "slow_echo", { text: "old era", ms: 60_000 }, ALICE_TASKS));

    await legacy.kill();
    modern = await startServerProcess(LAUNCHES.modernOnly(), legacy.port);

    const ended = await pollTask(gateway.url, task.taskId as string, (t) => t.status !== "working", { timeoutMs: 20_000 });
    assert.equal(ended.status, "failed", JSON.stringify(ended));
    const reason = ((ended.error as JsonObject).data as JsonObject | undefined)?.reason as string;
    assert.ok(reason === "upstream_era_changed" || reason === "upstream_lost", `a named failure: ${JSON.stringify(ended.error)}`);
    assert.ok(Object.hasOwn(REASONS, reason));

    const greeted = expectComplete(await callTool(gateway.url, "greet", { name: "Ada" }, { token: "alice", capabilities: {} }));
    assert.equal(textOf(greeted), "Hello, Ada! (as alice)", "the 2026-07-28 server answered");
    const after = expectComplete(await call(gateway.url, "server/discover"));
    assert.equal(((after._meta as JsonObject)["dev.taskgate/backend"] as JsonObject).era, "modern");
    const metrics = await (await fetch(new URL("/metrics", gateway.url))).text();
    assert.match(metrics, /taskgate_backend_era\{era="modern"\} 1/);
  });
});
