// taskgate in front of backends that already speak 2026-07-28: our v2 SDK server
// (test/support/fixtures/modernServer.ts) as a real child process, 2026-only and dual-era. The era is
// probed (server/discover) and shown (discover's _meta, /readyz, the backend_era metric);
// requests are relayed with their _meta and the caller's identity; MRTR rounds pass through, the
// backend's requestState sealed for the caller (another identity's retry never reaches it); the backend's own task comes back owned (bob cannot use it) and is
// followed with tasks/get and on a listen stream; a long tool on a backend without tasks becomes
// a task of taskgate's.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Gateway } from "../../../src/gateway.js";
import type { JsonObject } from "../../../src/protocol/wire.js";
import { startGatewayInFront } from "../../support/gatewayInFront.js";
import { openListen } from "../../support/listen.js";
import { resultOf, TASKS_CAPS } from "../../support/mcpClient.js";
import { accept, call, callTool, expectComplete, expectError, expectTask, textOf } from "../../support/realServerCalls.js";
import type { ServerProcess } from "../../support/servers/serverProcess.js";
import { startThirdPartyServer } from "../../support/servers/thirdParty.js";
import { pollTask } from "../../support/tasks.js";

const ALICE = { token: "alice", capabilities: { elicitation: {} } };
const ALICE_TASKS = { token: "alice", capabilities: { ...TASKS_CAPS, elicitation: {} } };
const BOB_TASKS = { token: "bob", capabilities: TASKS_CAPS };

describe("a 2026-only backend (v2 SDK, legacy: reject)", () => {
  let server: ServerProcess;
  let gateway: Gateway;
  let url: string;

  before(async () => {
    server = await startThirdPartyServer("modernOnly");
    gateway = await startGatewayInFront(server.url, { upstream: { subjectHeader: "X-User" }, tasks: { autoAfterMs: 200 } });
    url = gateway.url;
  });
  after(async () => {
    await gateway?.close();
    await server?.stop();
  });

  it("is found modern by server/discover and says so in discover, /readyz and the metrics", async () => {
    const discover = expectComplete(await call(url, "server/discover"));
    assert.deepEqual(discover.supportedVersions, ["2026-07-28"]);
    const caps = discover.capabilities as JsonObject;
    assert.ok(caps.tools, "the backend's tools capability is merged in");
    assert.deepEqual(Object.keys(caps.extensions as JsonObject).sort(), ["io.modelcontextprotocol/tasks"]);
    assert.equal(discover.instructions, "A modern fixture.");
    const meta = discover._meta as JsonObject;
    assert.deepEqual((meta["io.modelcontextprotocol/serverInfo"] as JsonObject).name, "taskgate-modern-fixture");
    assert.equal((meta["dev.taskgate/backend"] as JsonObject).era, "modern");

    const ready = await fetch(new URL("/readyz", url));
    assert.equal(ready.status, 200);
    const body = (await ready.json()) as { checks: Record<string, { ok: boolean; detail?: { era: string } }> };
    assert.equal(body.checks.upstream?.detail?.era, "modern", JSON.stringify(body));
    const metrics = await (await fetch(new URL("/metrics", url))).text();
    assert.match(metrics, /taskgate_backend_era\{era="modern"\} 1/);
  });

  it("relays a call with the caller's identity, and progress on the client's token", async () => {
    const greeted = expectComplete(await callTool(url, "greet", { name: "Ada" }, ALICE));
    assert.equal(textOf(greeted), "Hello, Ada! (as alice)");
    const slow = await callTool(url, "slow", { ms: 300 }, ALICE, { meta: { progressToken: "p-1" } });
    const progress = slow.events.filter((event) => event.method === "notifications/progress");
    assert.ok(progress.length >= 2, `progress relayed: ${JSON.stringify(slow.events)}`);
    assert.ok(progress.every((event) => (event.params as JsonObject).progressToken === "p-1"));
    assert.equal(textOf(expectComplete(slow)), "slept 300 ms");
  });

  it("passes an MRTR round through, its requestState sealed for the caller: only alice's retry reaches the backend", async () => {
    const round = resultOf(await callTool(url, "ask_name", {}, ALICE));
    assert.equal(round.resultType, "input_required");
    const state = round.requestState as string;
    assert.match(state, /^rs\./, "the client holds taskgate's handle");
    assert.ok(!state.includes("fixture-state-1"), "the backend's own state is not readable in it");
    const retry = (who: typeof ALICE, requestState: unknown, args: JsonObject = {}) =>
      callTool(url, "ask_name", args, who, { params: { inputResponses: { who: accept({ name: "Grace" }) }, requestState } });
    // The fixture's state binds nobody (a constant): without the seal bob's retry would be answered.
    const bobs = expectError(await retry({ ...ALICE, token: "bob" }, state), -32602);
    assert.match(bobs.message, /another identity/);
    const altered = `${state.slice(0, 10)}${state[10] === "A" ? "B" : "A"}${state.slice(11)}`;
    assert.match(expectError(await retry(ALICE, altered), -32602).message, /malformed or altered/);
    assert.match(expectError(await retry(ALICE, "fixture-state-1"), -32602).message, /echo it exactly as taskgate sent it/);
    assert.match(expectError(await retry(ALICE, state, { extra: 1 }), -32602).message, /other arguments/);
    const answered = await retry(ALICE, state);
    assert.match(textOf(expectComplete(answered)) ?? "", /^Hello, Grace!/);
  });

  it("relays the backend's own task, owned: tasks/get and a listen stream for alice, nothing for bob", async () => {
    const created = expectTask(await callTool(url, "native_report", {}, ALICE_TASKS));
    const taskId = created.taskId as string;
    assert.match(taskId, /^rt\./, "the backend's id is wrapped");
    assert.equal("content" in created, false, "only the Task fields of the backend's answer");
    const listen = await openListen(url, { taskIds: [taskId] }, { capabilities: TASKS_CAPS });
    const bobs = await openListen(url, { taskIds: [taskId] }, { token: "bob", capabilities: TASKS_CAPS });
    try {
      const ack = await listen.waitFor((frame) => frame.method === "notifications/subscriptions/acknowledged");
      assert.deepEqual((ack.params as JsonObject).notifications, { taskIds: [taskId] });
      const bobAck = await bobs.waitFor((frame) => frame.method === "notifications/subscriptions/acknowledged");
      assert.deepEqual((bobAck.params as JsonObject).notifications, { taskIds: [] }, "bob's listen does not follow alice's task");
      expectError(await call(url, "tasks/get", { taskId }, BOB_TASKS), -32602);
      expectError(await call(url, "tasks/cancel", { taskId }, BOB_TASKS), -32602);
      const done = await pollTask(url, taskId, (task) => task.status === "completed");
      assert.equal(done.taskId, taskId);
      assert.equal(textOf(done.result as JsonObject), "report 'untitled' for alice");
      const pushed = await listen.waitFor(
        (frame) => frame.method === "notifications/tasks" && (frame.params as JsonObject).status === "completed",
      );
      assert.equal((pushed.params as JsonObject).taskId, taskId);
    } finally {
      listen.close();
      bobs.close();
    }
  });

  it("delivers tasks/update to the backend's task, and tasks/cancel", async () => {
    const asked = expectTask(await callTool(url, "native_report", { ask: true }, ALICE_TASKS));
    const taskId = asked.taskId as string;
    const waiting = await pollTask(url, taskId, (task) => task.status === "input_required");
    assert.deepEqual(Object.keys(waiting.inputRequests as JsonObject), ["title"]);
    expectComplete(await call(url, "tasks/update", { taskId, inputResponses: { title: accept({ title: "Q3" }) } }, ALICE_TASKS));
    const done = await pollTask(url, taskId, (task) => task.status === "completed");
    assert.equal(textOf(done.result as JsonObject), "report 'Q3' for alice");

    const other = expectTask(await callTool(url, "native_report", { ask: true }, ALICE_TASKS));
    expectComplete(await call(url, "tasks/cancel", { taskId: other.taskId }, ALICE_TASKS));
    await pollTask(url, other.taskId as string, (task) => task.status === "cancelled");
  });

  it("relays the backend's errors with their code and status", async () => {
    const unknown = await callTool(url, "no_such_tool", {}, ALICE);
    assert.ok(unknown.message.error || (resultOf(unknown) as JsonObject).isError, JSON.stringify(unknown.message));
    const undeclared = await callTool(url, "ask_name", {}, { token: "alice", capabilities: {} });
    assert.equal(undeclared.status, 400);
    expectError(undeclared, -32021);
  });
});

describe("a backend without the tasks extension: taskgate makes the task", () => {
  let server: ServerProcess;
  let gateway: Gateway;
  let url: string;

  before(async () => {
    server = await startThirdPartyServer("modernNoTasks");
    gateway = await startGatewayInFront(server.url, {
      upstream: { subjectHeader: "X-User", protocol: "modern" },
      tasks: { autoAfterMs: 150 },
    });
    url = gateway.url;
  });
  after(async () => {
    await gateway?.close();
    await server?.stop();
  });

  it("turns a long call into a task of taskgate's (policy auto), and its question into the task's inputRequests", async () => {
    const created = expectTask(await callTool(url, "slow", { ms: 800 }, ALICE_TASKS));
    const taskId = created.taskId as string;
    assert.doesNotMatch(taskId, /^rt\./, "taskgate's own task");
    const done = await pollTask(url, taskId, (task) => task.status === "completed");
    assert.equal(textOf(done.result as JsonObject), "slept 800 ms");
  });
});

describe("access rules in front of a 2026-only backend", () => {
  let server: ServerProcess;
  let gateway: Gateway;

  before(async () => {
    server = await startThirdPartyServer("modernOnly");
    gateway = await startGatewayInFront(server.url, {
      upstream: { subjectHeader: "X-User" },
      access: { default: "allow", rules: [{ subjects: ["bob"], deny: { tools: ["greet"] } }] },
    });
  });
  after(async () => {
    await gateway?.close();
    await server?.stop();
  });

  it("hides a denied tool from bob as for a legacy backend: not listed, unknown when called", async () => {
    const listed = (who: string) =>
      call(gateway.url, "tools/list", {}, { token: who }).then((reply) =>
        ((resultOf(reply).tools as JsonObject[]) ?? []).map((tool) => tool.name),
      );
    assert.ok((await listed("alice")).includes("greet"));
    assert.equal((await listed("bob")).includes("greet"), false);
    const refused = await callTool(gateway.url, "greet", { name: "Bob" }, { token: "bob", capabilities: {} });
    expectError(refused, -32602);
    assert.equal(server.lines.filter((line) => line.includes('"tool":"greet"')).length, 0, "bob's call never reached the backend");
  });
});
