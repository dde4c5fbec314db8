// Issue 9, problem 5: `notifications/message` an upstream sends during a call reach a 2026-07-28
// client on the call's SSE stream when its request set _meta["io.modelcontextprotocol/logLevel"],
// filtered to that level and above, and never otherwise; for a task, a log message becomes the
// task's statusMessage. Both servers send their logs on the session's standalone GET stream:
// FastMCP's `context.log` (our fixture) and simpleStreamableHttp's multi-greet
// (`sendLoggingMessage(…, sessionId)`, three messages one second apart).
// The requests declare elicitation: per SPEC-upstream, a call that can be asked something holds
// its upstream session alone, which is what makes GET-stream messages attributable to it.
// Run: node --import tsx --test test/e2e/realServers/upstreamLogs.test.ts

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Gateway } from "../../../src/gateway.js";
import type { JsonObject } from "../../../src/protocol/wire.js";
import { inFrontOf, startGatewayInFront } from "../../support/gatewayInFront.js";
import type { RpcReply } from "../../support/mcpClient.js";
import { callTool, expectComplete, expectTask, FORMS, TASKS_AND_FORMS, textOf } from "../../support/realServerCalls.js";
import type { ServerProcess } from "../../support/servers/serverProcess.js";
import { startThirdPartyServer } from "../../support/servers/thirdParty.js";
import { TERMINAL, waitForTask } from "../../support/tasks.js";

const LOG_LEVEL = "io.modelcontextprotocol/logLevel";

/** The notifications/message frames of a reply: [level, data as JSON text]. */
function logFrames(reply: RpcReply): [string, string][] {
  return reply.events
    .filter((frame) => frame.method === "notifications/message")
    .map((frame) => {
      const params = frame.params as JsonObject;
      return [params.level as string, JSON.stringify(params.data)];
    });
}

const withLevel = (level: string | undefined) => (level === undefined ? {} : { meta: { [LOG_LEVEL]: level } });

describe("FastMCP (our fixture): context.log during a call", () => {
  const front = inFrontOf("fastmcp");

  const chatty = async (level: string | undefined) => {
    const tag = randomUUID();
    const reply = await callTool(front.gateway.url, "chatty", { tag }, { token: "alice", capabilities: FORMS }, withLevel(level));
    assert.equal(textOf(expectComplete(reply)), `logged 4 messages for ${tag}`);
    return { tag, frames: logFrames(reply) };
  };

  test("with logLevel debug, all four messages reach the call's SSE stream as notifications/message, in order", async () => {
    const { tag, frames } = await chatty("debug");
    assert.deepEqual(
      frames.map(([level]) => level),
      ["debug", "info", "warning", "error"],
      `frames: ${JSON.stringify(frames)}`,
    );
    for (const [level, data] of frames) assert.ok(data.includes(`${level} from ${tag}`), `the ${level} frame carries its message: ${data}`);
  });

  test("with logLevel error, only the error message arrives", async () => {
    const { tag, frames } = await chatty("error");
    assert.deepEqual(
      frames.map(([level]) => level),
      ["error"],
      `frames: ${JSON.stringify(frames)}`,
    );
    assert.ok(frames[0]![1].includes(`error from ${tag}`));
  });

  test("without a logLevel, no notifications/message is sent to the client", async () => {
    const { frames } = await chatty(undefined);
    assert.deepEqual(frames, []);
  });
});

describe("simpleStreamableHttp (SDK 1.x): multi-greet logs on the GET stream", () => {
  let server: ServerProcess;
  let gateway: Gateway;

  before(async () => {
    server = await startThirdPartyServer("simpleStreamableHttp");
    gateway = await startGatewayInFront(server.url, { tasks: { tools: { "multi-greet": "always" } } });
  });
  after(async () => {
    await gateway?.close();
    await server?.stop();
  });

  const greet = async (name: string, level: string | undefined) => {
    const reply = await callTool(gateway.url, "multi-greet", { name }, { token: "alice", capabilities: FORMS }, withLevel(level));
    assert.equal(textOf(expectComplete(reply)), `Good morning, ${name}!`);
    return logFrames(reply);
  };

  test("with logLevel debug, its debug and two info messages reach the call's SSE stream", async () => {
    assert.deepEqual(await greet("Ada", "debug"), [
      ["debug", JSON.stringify("Starting multi-greet for Ada")],
      ["info", JSON.stringify("Sending first greeting to Ada")],
      ["info", JSON.stringify("Sending second greeting to Ada")],
    ]);
  });

  test("with logLevel info, the debug message is filtered out", async () => {
    const frames = await greet("Grace", "info");
    assert.deepEqual(
      frames.map(([level]) => level),
      ["info", "info"],
      JSON.stringify(frames),
    );
  });

  test("as a task, its log messages become the task's statusMessage", async () => {
    const who = { token: "bob", capabilities: TASKS_AND_FORMS };
    const taskId = expectTask(await callTool(gateway.url, "multi-greet", { name: "Linus" }, who, withLevel("info"))).taskId as string;
    const seen = new Set<string>();
    const done = await waitForTask(
      gateway.url,
      taskId,
      (task) => {
        if (typeof task.statusMessage === "string") seen.add(task.statusMessage);
        return TERMINAL(task);
      },
      { token: who.token, timeoutMs: 15_000 },
    );
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.ok(
      [...seen].some((message) => /greeting to Linus/.test(message)),
      `a log message showed as statusMessage; seen: ${JSON.stringify([...seen])}`,
    );
  });
});
