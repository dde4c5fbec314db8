// A fleet of legacy and modern backends: the example legacy server, our 2026-only v2 SDK server
// without the tasks extension (test/support/fixtures/modernServer.ts, TASKS=off) and the same
// server with its own tasks, behind one taskgate with a federated endpoint. A task on each
// (taskgate makes the first two: the legacy one on a session, the modern one by rounds; the third
// is the backend's own, relayed), one federated listen stream follows all three, and bob sees none
// of alice's tasks (tasks/get, listen). Each backend's era is probed on its own.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../../examples/legacy-server/server.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { type Gateway, startGateway } from "../../../src/gateway.js";
import { createLogger } from "../../../src/observability/logger.js";
import type { JsonObject } from "../../../src/protocol/wire.js";
import { openListen } from "../../support/listen.js";
import { TASKS_CAPS } from "../../support/mcpClient.js";
import { call, callTool, expectComplete, expectError, expectTask, textOf } from "../../support/realServerCalls.js";
import type { ServerProcess } from "../../support/servers/serverProcess.js";
import { startThirdPartyServer } from "../../support/servers/thirdParty.js";
import { pollTask } from "../../support/tasks.js";

const ALICE = { token: "alice", capabilities: TASKS_CAPS };
const BOB = { token: "bob", capabilities: TASKS_CAPS };

describe("a fleet with a legacy and a modern backend", () => {
  let legacy: LegacyServer;
  let modern: ServerProcess;
  let native: ServerProcess;
  let gateway: Gateway;
  let base: string;

  before(async () => {
    [legacy, modern, native] = await Promise.all([
      startLegacyServer({ port: 0, speed: 20 }),
      startThirdPartyServer("modernNoTasks"),
      startThirdPartyServer("modernOnly"),
    ]);
    const config = ConfigSchema.parse({
      port: 0,
      auth: { mode: "demo" },
      shutdown: { graceMs: 0 },
      backends: {
        old: { url: legacy.url, tasks: { tools: { slow_echo: "always" } } },
        new: { url: modern.url, subjectHeader: "X-User", tasks: { tools: { slow: "always" } } },
        native: { url: native.url, subjectHeader: "X-User" },
      },
      federation: { path: "/mcp" },
    });
    gateway = await startGateway(config, { log: createLogger(process.env.TEST_LOG_LEVEL ?? "silent") });
    base = new URL(gateway.url).origin;
  });
  after(async () => {
    await gateway?.close();
    await legacy?.close();
    await modern?.stop();
    await native?.stop();
  });

  it("finds each backend's era on its own", async () => {
    const old = expectComplete(await call(`${base}/mcp/old`, "server/discover"));
    const fresh = expectComplete(await call(`${base}/mcp/new`, "server/discover"));
    assert.equal(((old._meta as JsonObject)["dev.taskgate/backend"] as JsonObject).era, "legacy");
    assert.equal(((fresh._meta as JsonObject)["dev.taskgate/backend"] as JsonObject).era, "modern");
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(metrics, /taskgate_backend_era\{era="modern",backend="new"\} 1|taskgate_backend_era\{backend="new",era="modern"\} 1/);
  });

  it("runs a task on each, follows both on one federated listen stream, and shows bob neither", async () => {
    const federated = `${base}/mcp`;
    const oldTask = expectTask(await callTool(federated, "old__slow_echo", { text: "from the old era", ms: 4_000 }, ALICE));
    const newTask = expectTask(await callTool(federated, "new__slow", { ms: 400 }, ALICE));
    const nativeTask = expectTask(await callTool(federated, "native__native_report", {}, ALICE));
    assert.match(nativeTask.taskId as string, /^rt\.native\./, "the backend's own task, its id naming the backend");
    const ids = [oldTask.taskId as string, newTask.taskId as string, nativeTask.taskId as string];
    const listen = await openListen(federated, { taskIds: ids }, { capabilities: TASKS_CAPS });
    const bobs = await openListen(federated, { taskIds: ids }, { token: "bob", capabilities: TASKS_CAPS });
    try {
      const ack = await listen.waitFor((frame) => frame.method === "notifications/subscriptions/acknowledged");
      assert.deepEqual([...((ack.params as JsonObject).notifications as { taskIds: string[] }).taskIds].sort(), [...ids].sort());
      const bobAck = await bobs.waitFor((frame) => frame.method === "notifications/subscriptions/acknowledged");
      assert.deepEqual((bobAck.params as JsonObject).notifications, { taskIds: [] });
      for (const taskId of ids) expectError(await call(federated, "tasks/get", { taskId }, BOB), -32602);

      const completed = (taskId: string) => (frame: JsonObject) =>
        frame.method === "notifications/tasks" &&
        (frame.params as JsonObject).taskId === taskId &&
        (frame.params as JsonObject).status === "completed";
      const newDone = await listen.waitFor(completed(ids[1] as string), 15_000, "the modern backend's task completed");
      assert.equal(textOf((newDone.params as JsonObject).result as JsonObject), "slept 400 ms");
      const nativeDone = await listen.waitFor(completed(ids[2] as string), 15_000, "the native backend's own task completed");
      assert.equal(textOf((nativeDone.params as JsonObject).result as JsonObject), "report 'untitled' for alice");
      const oldDone = await listen.waitFor(completed(ids[0] as string), 15_000, "the legacy backend's task completed");
      assert.equal(textOf((oldDone.params as JsonObject).result as JsonObject), "from the old era");
      assert.equal(bobs.frames.filter((frame) => frame.method === "notifications/tasks").length, 0, "bob's stream got nothing");
      for (const taskId of ids.slice(1)) await pollTask(federated, taskId, (task) => task.status === "completed");
    } finally {
      listen.close();
      bobs.close();
    }
  });
});
