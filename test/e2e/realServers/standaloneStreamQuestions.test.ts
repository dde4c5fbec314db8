// Issue 9, problem 2: questions a legacy server sends without relatedRequestId, which arrive on the
// session's standalone GET stream, reach the call that caused them — inline (an MRTR round) and
// as a task (input_required + tasks/update). Against three servers others wrote or that ask the
// way others do: the SDK's elicitationFormExample (`mcpServer.server.elicitInput()`), FastMCP's
// `context.elicit` (our fixture on FastMCP), and server-everything's roots/list (over HTTP and
// stdio, where everything a server sends is "standalone"). One identity has one upstream session
// (upstream.sessionsPer "identity"): a standalone question goes to the one call of that user in
// flight; while several run, it cannot be attributed and is refused upstream — never shown to a
// call it may not belong to.
// Run: node --import tsx --test test/e2e/realServers/standaloneStreamQuestions.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Gateway } from "../../../src/gateway.js";
import type { JsonObject } from "../../../src/protocol/wire.js";
import { inFrontOf, ready, startGatewayInFront, startGatewayOnCommand } from "../../support/gatewayInFront.js";
import { waitForMetric } from "../../support/metrics.js";
import {
  accept,
  callTool,
  expectComplete,
  expectInputRequired,
  expectTask,
  FORMS,
  TASKS_AND_FORMS,
  textOf,
} from "../../support/realServerCalls.js";
import { answerRootsRounds } from "../../support/roots.js";
import type { ServerProcess } from "../../support/servers/serverProcess.js";
import { STDIO_COMMANDS, startThirdPartyServer } from "../../support/servers/thirdParty.js";
import { cancelTask, hasStatus, keysOf, TERMINAL, updateTask, waitForTask } from "../../support/tasks.js";

const TASK_WAIT_MS = 15_000;

/** Runs a tool as a task that asks one form question on the GET stream; answers it; returns the completed task. */
async function askAsTask(
  url: string,
  tool: string,
  who: { token: string },
  check: (question: JsonObject) => void,
  answer: JsonObject,
): Promise<JsonObject> {
  const created = expectTask(await callTool(url, tool, {}, { token: who.token, capabilities: TASKS_AND_FORMS }));
  const taskId = created.taskId as string;
  try {
    const asking = await waitForTask(url, taskId, hasStatus("input_required", "completed", "failed", "cancelled"), {
      token: who.token,
      timeoutMs: TASK_WAIT_MS,
    });
    assert.equal(asking.status, "input_required", `the task must wait for the answer, got ${JSON.stringify(asking)}`);
    const keys = keysOf(asking);
    assert.equal(keys.length, 1, `one question, got ${keys.join(", ")}`);
    const question = (asking.inputRequests as Record<string, JsonObject>)[keys[0]!]!;
    assert.equal(question.method, "elicitation/create");
    check(question.params as JsonObject);
    await updateTask(url, taskId, { [keys[0]!]: answer }, who.token);
    const done = await waitForTask(url, taskId, TERMINAL, { token: who.token, timeoutMs: TASK_WAIT_MS });
    assert.equal(done.status, "completed", `expected completed, got ${JSON.stringify(done)}`);
    return done;
  } catch (error) {
    await cancelTask(url, taskId, who.token).catch(() => undefined);
    throw error;
  }
}

describe("elicitationFormExample (SDK 1.x): register_user asks with elicitInput() on the GET stream", () => {
  let server: ServerProcess;
  let gateway: Gateway;
  const REGISTRATION = { username: "ada_l", email: "ada@example.com", password: "analytical-engine", newsletter: true };
  const checkForm = (params: JsonObject) => {
    assert.equal(params.message, "Please provide your registration information:");
    assert.deepEqual((params.requestedSchema as JsonObject).required, ["username", "email", "password"]);
  };

  before(async () => {
    server = await startThirdPartyServer("elicitationFormExample");
    gateway = await startGatewayInFront(server.url, { tasks: { tools: { register_user: "always" } } });
  });
  after(async () => {
    await gateway?.close();
    await server?.stop();
  });

  test("inline: the registration form comes back as an MRTR round and the retry completes 'Registration successful'", async () => {
    const who = { token: "alice", capabilities: FORMS };
    const round = expectInputRequired(await callTool(gateway.url, "register_user", {}, who));
    const question = round.inputRequests[round.key]!;
    assert.equal(question.method, "elicitation/create");
    checkForm(question.params);
    const done = expectComplete(
      await callTool(gateway.url, "register_user", {}, who, {
        params: { requestState: round.requestState, inputResponses: { [round.key]: accept(REGISTRATION) } },
      }),
    );
    assert.notEqual(done.isError, true, textOf(done));
    assert.match(textOf(done), /^Registration successful!/);
    assert.match(textOf(done), /Username: ada_l/);
  });

  test("as a task: input_required with the form, tasks/update answers it, completed 'Registration successful'", async () => {
    const done = await askAsTask(gateway.url, "register_user", { token: "bob" }, checkForm, accept(REGISTRATION));
    const result = done.result as JsonObject;
    assert.notEqual(result.isError, true, textOf(result));
    assert.match(textOf(result), /^Registration successful!/);
    assert.match(textOf(result), /Email: ada@example.com/);
  });
});

describe("FastMCP (our fixture): context.elicit asks on the GET stream", () => {
  let server: ServerProcess;
  let gateway: Gateway;
  const checkName = (params: JsonObject) => {
    assert.equal(params.message, "What is your name?");
    assert.deepEqual(Object.keys((params.requestedSchema as { properties: JsonObject }).properties), ["name"]);
  };

  before(async () => {
    server = await startThirdPartyServer("fastmcp");
    gateway = await startGatewayInFront(server.url, { tasks: { tools: { ask_name: "always" } } });
  });
  after(async () => {
    await gateway?.close();
    await server?.stop();
  });

  test("inline: the name question comes back as an MRTR round and the retry completes with the greeting", async () => {
    const who = { token: "alice", capabilities: FORMS };
    const round = expectInputRequired(await callTool(gateway.url, "ask_name", {}, who));
    checkName(round.inputRequests[round.key]!.params);
    const done = expectComplete(
      await callTool(gateway.url, "ask_name", {}, who, {
        params: { requestState: round.requestState, inputResponses: { [round.key]: accept({ name: "Ada" }) } },
      }),
    );
    assert.equal(textOf(done), "Hello, Ada!");
  });

  test("as a task: input_required with the name question, tasks/update answers it, completed with the greeting", async () => {
    const done = await askAsTask(gateway.url, "ask_name", { token: "bob" }, checkName, accept({ name: "Grace" }));
    assert.equal(textOf(done.result), "Hello, Grace!");
  });

  test("while another call of the same user runs, the GET-stream question cannot be attributed: refused, shown to neither", async () => {
    const who = { token: "carol", capabilities: FORMS };
    const from = server.lines.length;
    const counting = callTool(gateway.url, "count", { n: 30, stepMs: 100 }, who);
    await server.waitForLine(/"tool":"count"/, { from });
    const asked = await callTool(gateway.url, "ask_name", {}, who);
    const result = expectComplete(asked); // FastMCP turns the refused elicitation into a tool error
    assert.equal(result.isError, true, `expected the tool's own failure, got ${JSON.stringify(result)}`);
    const counted = expectComplete(await counting);
    assert.equal(textOf(counted), "counted to 30", "the other call is not given the question either");
    // Alone again: the same user's question reaches its call.
    const round = expectInputRequired(await callTool(gateway.url, "ask_name", {}, who));
    checkName(round.inputRequests[round.key]!.params);
  });
});

describe("server-everything: roots/list arrives on the GET stream", () => {
  const front = inFrontOf("everything");

  test("get-roots-list with roots declared asks roots/list as an MRTR round and lists the answered root", async () => {
    const roots = [{ uri: "file:///work/project", name: "Project" }];
    const done = await answerRootsRounds(front.gateway.url, "get-roots-list", {}, { token: "alice", capabilities: { roots: {} } }, roots);
    assert.match(textOf(done), /^Current MCP Roots \(1 total\)/);
    assert.match(textOf(done), /URI: file:\/\/\/work\/project/);
  });
});

describe("server-everything over stdio: every message is standalone, so the one call in flight is the rule", () => {
  let gateway: Gateway;
  const who = { token: "alice", capabilities: { roots: {} } };
  const roots = [{ uri: "file:///work/stdio", name: "Stdio" }];

  before(async () => {
    gateway = await startGatewayOnCommand(STDIO_COMMANDS.everything());
    await ready(gateway); // a cold first start under load is waited for here, not in the first call's time limit
  });
  after(async () => gateway?.close());

  test("get-roots-list alone: roots/list reaches the call as an MRTR round", async () => {
    const done = await answerRootsRounds(gateway.url, "get-roots-list", {}, who, roots);
    assert.match(textOf(done), /URI: file:\/\/\/work\/stdio/);
  });

  test("get-roots-list while the user's long call runs: roots/list is refused, neither call is asked", async () => {
    const bob = { token: "bob", capabilities: { roots: {} } }; // a fresh process: no roots remembered from earlier calls
    // The long call declares nothing: server-everything's own roots/list right after the session opens
    // (not caused by any call) may reach it while it runs alone, and is then refused as undeclared.
    const bobWithout = { token: "bob", capabilities: {} };
    expectComplete(await callTool(gateway.url, "echo", { message: "warm" }, bob));
    const long = callTool(gateway.url, "trigger-long-running-operation", { duration: 3, steps: 3 }, bobWithout);
    await waitForMetric(gateway.url, "taskgate_upstream_calls", {}, (value) => value >= 1);
    const result = expectComplete(await callTool(gateway.url, "get-roots-list", {}, bob)); // server-everything catches the refusal
    assert.match(JSON.stringify(result), /no roots are currently configured/);
    assert.match(textOf(expectComplete(await long)), /Long running operation completed/);
  });
});
