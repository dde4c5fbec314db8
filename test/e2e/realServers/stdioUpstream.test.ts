// Issue 13: taskgate in front of a server that speaks only stdio. @modelcontextprotocol/server-everything
// in stdio mode is started by taskgate itself (upstream.command), one process per upstream
// session: a long-running call with progress becomes a task, elicitation (form and URL), sampling
// and roots become input_required (in a task and inline), a cancel stops the call, a resource
// update reaches subscriptions/listen, and identities never share a process.
// Run: node --import tsx --test test/e2e/realServers/stdioUpstream.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Gateway } from "../../../src/gateway.js";
import type { JsonObject } from "../../../src/protocol/wire.js";
import { ready, startGatewayOnCommand } from "../../support/gatewayInFront.js";
import { openListen } from "../../support/listen.js";
import { resultOf, TASKS_CAPS } from "../../support/mcpClient.js";
import { scrape } from "../../support/metrics.js";
import { call, callTool, expectComplete, expectInputRequired, expectTask, textOf } from "../../support/realServerCalls.js";
import { answerRootsRounds } from "../../support/roots.js";
import { STDIO_COMMANDS } from "../../support/servers/thirdParty.js";
import { cancelTask, getTask, hasStatus, keysOf, updateTask, waitForTask } from "../../support/tasks.js";

const TASKS_ONLY = { token: "alice", capabilities: TASKS_CAPS };
const TASKS_AND_FORMS = { token: "alice", capabilities: { ...TASKS_CAPS, elicitation: {} } };
const TASKS_AND_SAMPLING = { token: "alice", capabilities: { ...TASKS_CAPS, sampling: {} } };

/** The pids of the server processes the gateway runs now. */
const pidsOf = (gateway: Gateway) => gateway.upstreamProcesses?.() ?? [];

describe("server-everything over stdio: taskgate starts it and speaks the session protocol", () => {
  let gateway: Gateway;

  before(async () => {
    gateway = await startGatewayOnCommand(STDIO_COMMANDS.everything(), {
      tasks: {
        tools: {
          "trigger-long-running-operation": "always",
          "trigger-elicitation-request": "always",
          "trigger-sampling-request": "always",
        },
      },
    });
    await ready(gateway); // a cold first server start is waited for here, not in a call's time limit
  });
  after(async () => {
    await gateway?.close();
  });

  test("server/discover and tools/list come from the stdio server", async () => {
    const discover = resultOf(await call(gateway.url, "server/discover", {}, TASKS_ONLY));
    assert.ok(discover, "server/discover answers");
    assert.match(JSON.stringify(discover._meta), /everything/i, "serverInfo is the stdio server's own");
    const tools = resultOf(await call(gateway.url, "tools/list", {}, TASKS_ONLY));
    const names = (tools?.tools as { name: string }[]).map((tool) => tool.name);
    assert.ok(names.includes("echo") && names.includes("trigger-long-running-operation"), names.join(", "));
    const echo = expectComplete(await callTool(gateway.url, "echo", { message: "over stdio" }, { token: "alice", capabilities: {} }));
    assert.match(textOf(echo), /over stdio/);
  });

  test("a long-running operation is a task whose progress shows in statusMessage, then completes", async () => {
    const task = expectTask(await callTool(gateway.url, "trigger-long-running-operation", { duration: 2, steps: 4 }, TASKS_ONLY));
    const taskId = task.taskId as string;
    const progressed = await waitForTask(gateway.url, taskId, (t) => typeof t.statusMessage === "string" && /\d/.test(t.statusMessage), {
      timeoutMs: 10_000,
    });
    assert.equal(progressed.status, "working");
    const done = await waitForTask(gateway.url, taskId, hasStatus("completed", "failed"), { timeoutMs: 15_000 });
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.match(JSON.stringify(done.result), /Long running operation completed/);
  });

  test("elicitation in a task is input_required; tasks/update answers it and the task completes", async () => {
    const task = expectTask(await callTool(gateway.url, "trigger-elicitation-request", {}, TASKS_AND_FORMS));
    const taskId = task.taskId as string;
    const asking = await waitForTask(gateway.url, taskId, hasStatus("input_required"), { timeoutMs: 10_000 });
    const [key] = keysOf(asking);
    assert.ok(key, "one input request");
    const question = (asking.inputRequests as Record<string, JsonObject>)[key as string] as JsonObject;
    assert.equal(question.method, "elicitation/create");
    await updateTask(gateway.url, taskId, { [key as string]: { action: "decline" } });
    const done = await waitForTask(gateway.url, taskId, hasStatus("completed", "failed"), { timeoutMs: 10_000 });
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.match(JSON.stringify(done.result), /declined/i);
  });

  test("sampling is an inline input_required (MRTR); the retry with the answer completes the call", async () => {
    const args = { prompt: "say hi", maxTokens: 10 };
    const who = { token: "alice", capabilities: { sampling: {} } };
    const round = expectInputRequired(await callTool(gateway.url, "trigger-sampling-request", args, who));
    assert.equal(round.inputRequests[round.key]?.method, "sampling/createMessage");
    const answer = {
      role: "assistant",
      content: { type: "text", text: "hi from the stdio test" },
      model: "test-model",
      stopReason: "endTurn",
    };
    const done = expectComplete(
      await callTool(gateway.url, "trigger-sampling-request", args, who, {
        params: { requestState: round.requestState, inputResponses: { [round.key]: answer } },
      }),
    );
    assert.match(textOf(done), /hi from the stdio test/);
  });

  test("sampling in a task (tool policy always) is input_required and completes once answered", async () => {
    const reply = await callTool(gateway.url, "trigger-sampling-request", { prompt: "task hi", maxTokens: 10 }, TASKS_AND_SAMPLING);
    const task = expectTask(reply);
    const taskId = task.taskId as string;
    const asking = await waitForTask(gateway.url, taskId, hasStatus("input_required"), { timeoutMs: 10_000 });
    const [key] = keysOf(asking);
    const answer = { role: "assistant", content: { type: "text", text: "sampled in a task" }, model: "m", stopReason: "endTurn" };
    await updateTask(gateway.url, taskId, { [key as string]: answer });
    const done = await waitForTask(gateway.url, taskId, hasStatus("completed", "failed"), { timeoutMs: 10_000 });
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.match(JSON.stringify(done.result), /sampled in a task/);
  });

  test("roots/list, asked on the process's stdout outside any request stream, reaches the asking call (MRTR rounds)", async () => {
    const who = { token: "frank", capabilities: { roots: {} } };
    const done = await answerRootsRounds(gateway.url, "get-roots-list", {}, who, [{ uri: "file:///work/stdio", name: "Stdio" }]);
    assert.match(textOf(done), /URI: file:\/\/\/work\/stdio/);
  });

  test("a URL elicitation is an inline input_required in URL mode; accepting it completes the call", async () => {
    const who = { token: "grace", capabilities: { elicitation: { url: {} } } };
    const args = { url: "https://example.com/authorize" };
    const round = expectInputRequired(await callTool(gateway.url, "trigger-url-elicitation", args, who));
    const question = round.inputRequests[round.key] as { method: string; params: JsonObject };
    assert.equal(question.method, "elicitation/create");
    assert.equal(question.params.mode, "url");
    const done = expectComplete(
      await callTool(gateway.url, "trigger-url-elicitation", args, who, {
        params: { requestState: round.requestState, inputResponses: { [round.key]: { action: "accept" } } },
      }),
    );
    assert.match(textOf(done), /User completed the URL elicitation flow/);
  });

  test("tasks/cancel stops the long-running call; the identity's process keeps serving", async () => {
    const task = expectTask(await callTool(gateway.url, "trigger-long-running-operation", { duration: 30, steps: 30 }, TASKS_ONLY));
    const taskId = task.taskId as string;
    await cancelTask(gateway.url, taskId);
    const cancelled = await getTask(gateway.url, taskId);
    assert.equal(cancelled.status, "cancelled");
    const echo = expectComplete(
      await callTool(gateway.url, "echo", { message: "still here" }, { token: "alice", capabilities: TASKS_CAPS }),
    );
    assert.match(textOf(echo), /still here/);
  });

  test("subscriptions/listen: a resource update the process sends on stdout reaches the listener", async () => {
    const who = { token: "erin", capabilities: {} };
    const listed = resultOf(await call(gateway.url, "resources/list", {}, who));
    const uri = (listed?.resources as { uri: string }[])[0]?.uri as string;
    assert.ok(uri, "server-everything lists resources");
    const stream = await openListen(gateway.url, { resourceSubscriptions: [uri] }, { token: who.token, id: 5 });
    try {
      await stream.waitFor(() => true, 5_000, "the listen acknowledgement");
      // toggle-subscriber-updates sends resources/updated for every subscribed uri at once, then every 5 s.
      expectComplete(await callTool(gateway.url, "toggle-subscriber-updates", {}, who));
      const updated = await stream.waitFor((frame) => frame.method === "notifications/resources/updated", 8_000, "resources/updated");
      assert.equal((updated.params as JsonObject).uri, uri);
    } finally {
      stream.close();
    }
  });

  test("two identities never share a process", async () => {
    const before = new Set(pidsOf(gateway));
    expectComplete(await callTool(gateway.url, "echo", { message: "carol" }, { token: "carol", capabilities: {} }));
    const withCarol = pidsOf(gateway).filter((pid) => !before.has(pid));
    expectComplete(await callTool(gateway.url, "echo", { message: "dave" }, { token: "dave", capabilities: {} }));
    const withDave = pidsOf(gateway).filter((pid) => !before.has(pid) && !withCarol.includes(pid));
    assert.equal(withCarol.length, 1, "carol's first call started one process");
    assert.equal(withDave.length, 1, "dave's first call started another");
    const metrics = await scrape(gateway.url);
    assert.equal(metrics.value("taskgate_upstream_processes"), pidsOf(gateway).length, "the gauge counts the processes");
  });
});

describe("a stdio server whose tool list changes (SDK 1.x fixture)", () => {
  let gateway: Gateway;

  before(async () => {
    gateway = await startGatewayOnCommand(STDIO_COMMANDS.listChanges());
    await ready(gateway); // a cold first server start is waited for here, not in a call's time limit
  });
  after(async () => {
    await gateway?.close();
  });

  test("tools/list_changed on the process's stdout reaches a toolsListChanged listener, and tools/list shows the new tool", async () => {
    const who = { token: "heidi", capabilities: {} };
    const stream = await openListen(gateway.url, { toolsListChanged: true }, { token: who.token, id: "tools" });
    try {
      await stream.waitFor(() => true, 5_000, "the listen acknowledgement");
      expectComplete(await callTool(gateway.url, "add_tool", { name: "fresh_tool" }, who));
      await stream.waitFor((frame) => frame.method === "notifications/tools/list_changed", 5_000, "tools/list_changed");
      const tools = resultOf(await call(gateway.url, "tools/list", {}, who));
      assert.ok(
        (tools?.tools as { name: string }[]).some((tool) => tool.name === "fresh_tool"),
        JSON.stringify(tools),
      );
      assert.match(textOf(expectComplete(await callTool(gateway.url, "fresh_tool", {}, who))), /fresh_tool ran/);
    } finally {
      stream.close();
    }
  });
});
