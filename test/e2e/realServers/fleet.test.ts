// A fleet: three servers others wrote (and ours) behind one taskgate — server-everything over HTTP
// at /mcp/everything, server-filesystem over stdio at /mcp/files, the example legacy server over
// HTTP at /mcp/legacy — and the federated endpoint at /mcp over them.
// Run: node --import tsx --test test/e2e/realServers/fleet.test.ts

import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../../examples/legacy-server/server.js";
import { ConfigSchema } from "../../../src/config/schema.js";
import { type Gateway, startGateway } from "../../../src/gateway.js";
import { createLogger } from "../../../src/observability/logger.js";
import type { JsonObject } from "../../../src/protocol/wire.js";
import { connectLegacyClient, legacyInitialize, legacyRequest } from "../../support/legacyClient.js";
import { openListen } from "../../support/listen.js";
import { errorOf, resultOf, TASKS_CAPS } from "../../support/mcpClient.js";
import { call, callTool, expectComplete, expectTask, TASKS_AND_FORMS, textOf } from "../../support/realServerCalls.js";
import type { ServerProcess } from "../../support/servers/serverProcess.js";
import { STDIO_COMMANDS, startThirdPartyServer } from "../../support/servers/thirdParty.js";
import { cancelTask, getTask, hasStatus, keysOf, taskRpc, updateTask, waitForTask } from "../../support/tasks.js";

const alice = { token: "alice", capabilities: TASKS_AND_FORMS };
const bob = { token: "bob", capabilities: TASKS_AND_FORMS };
const PLAIN = { token: "alice", capabilities: {} };
const COUNTER = "example://counter";

describe("a fleet: server-everything (HTTP), server-filesystem (stdio) and the example legacy server behind one taskgate", () => {
  let everything: ServerProcess;
  let legacy: LegacyServer;
  let dir: string;
  let gateway: Gateway;
  let base: string;
  const at = (name: string) => `${base}/mcp/${name}`;
  const federated = () => `${base}/mcp`;

  before(async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "taskgate-fleet-")));
    writeFileSync(join(dir, "hello.txt"), "hello from the fleet\n");
    [everything, legacy] = await Promise.all([startThirdPartyServer("everything"), startLegacyServer({ port: 0, speed: 20 })]);
    const config = ConfigSchema.parse({
      port: 0,
      auth: { mode: "demo" },
      shutdown: { graceMs: 0 },
      backends: {
        everything: {
          url: everything.url,
          tasks: { tools: { "trigger-long-running-operation": "always", "trigger-elicitation-request": "always" } },
        },
        files: { command: STDIO_COMMANDS.filesystem(dir), tasks: { tools: { read_text_file: "always" } } },
        legacy: { url: legacy.url, tasks: { tools: { build_report: "always", slow_echo: "always" } } },
      },
      federation: { path: "/mcp" },
    });
    gateway = await startGateway(config, { log: createLogger(process.env.TEST_LOG_LEVEL ?? "silent") });
    base = `http://127.0.0.1:${gateway.port}`;
  });
  after(async () => {
    await gateway?.close();
    await Promise.all([everything?.stop(), legacy?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  test("each backend is at its own path with its own catalog", async () => {
    const names = async (name: string) =>
      ((resultOf(await call(at(name), "tools/list", {}, PLAIN)).tools as JsonObject[]) ?? []).map((tool) => tool.name as string);
    assert.ok((await names("everything")).includes("echo"));
    assert.ok((await names("files")).includes("read_text_file"));
    assert.ok((await names("legacy")).includes("build_report"));
    assert.ok(!(await names("legacy")).includes("echo"), "one backend's tools are not another's");
    const unknown = await fetch(`${base}/mcp/nobody`, { method: "POST", body: "{}" });
    assert.equal(unknown.status, 404, "a path no backend has is not an endpoint");
  });

  test("legacy: a task whose question is answered through tasks/update completes", async () => {
    const task = expectTask(await callTool(at("legacy"), "build_report", { month: "2026-01" }, alice));
    const taskId = task.taskId as string;
    const asking = await waitForTask(at("legacy"), taskId, hasStatus("input_required"), { timeoutMs: 15_000 });
    const [key] = keysOf(asking);
    await updateTask(at("legacy"), taskId, { [key as string]: { action: "accept", content: { charts: true } } });
    const done = await waitForTask(at("legacy"), taskId, hasStatus("completed", "failed"), { timeoutMs: 15_000 });
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.match(JSON.stringify(done.result), /charts included/);
  });

  test("everything: a task's elicitation answered through tasks/update; a long task cancelled", async () => {
    const asked = expectTask(await callTool(at("everything"), "trigger-elicitation-request", {}, alice));
    const asking = await waitForTask(at("everything"), asked.taskId as string, hasStatus("input_required"), { timeoutMs: 15_000 });
    await updateTask(at("everything"), asked.taskId as string, { [keysOf(asking)[0] as string]: { action: "decline" } });
    const answered = await waitForTask(at("everything"), asked.taskId as string, hasStatus("completed", "failed"), { timeoutMs: 15_000 });
    assert.equal(answered.status, "completed", JSON.stringify(answered));
    const long = expectTask(await callTool(at("everything"), "trigger-long-running-operation", { duration: 30, steps: 30 }, alice));
    await cancelTask(at("everything"), long.taskId as string);
    const cancelled = await waitForTask(at("everything"), long.taskId as string, hasStatus("cancelled", "failed", "completed"));
    assert.equal(cancelled.status, "cancelled");
  });

  test("files: a task over stdio reads the directory's file", async () => {
    const task = expectTask(await callTool(at("files"), "read_text_file", { path: join(dir, "hello.txt") }, alice));
    const done = await waitForTask(at("files"), task.taskId as string, hasStatus("completed", "failed"), { timeoutMs: 15_000 });
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.match(JSON.stringify(done.result), /hello from the fleet/);
  });

  test("a task id answers only on the path that made it, and never to another identity", async () => {
    const task = expectTask(await callTool(at("legacy"), "slow_echo", { text: "mine", ms: 200 }, alice));
    const taskId = task.taskId as string;
    await getTask(at("legacy"), taskId);
    for (const url of [at("everything"), at("files"), federated()]) {
      const elsewhere = await taskRpc(url, "tasks/get", { taskId });
      assert.equal(errorOf(elsewhere)?.code, -32602, `${url}: ${JSON.stringify(elsewhere.message)}`);
    }
    for (const url of [at("legacy"), at("everything"), at("files"), federated()]) {
      const asBob = await taskRpc(url, "tasks/get", { taskId }, "bob");
      assert.equal(errorOf(asBob)?.code, -32602, `bob on ${url}: ${JSON.stringify(asBob.message)}`);
    }
    const bobs = expectTask(await callTool(federated(), "legacy__slow_echo", { text: "bob's", ms: 200 }, bob));
    const onFederation = await taskRpc(federated(), "tasks/get", { taskId: bobs.taskId as string }, "alice");
    assert.equal(errorOf(onFederation)?.code, -32602, "alice cannot see bob's federated task");
    assert.equal(errorOf(await taskRpc(at("legacy"), "tasks/get", { taskId: bobs.taskId as string }, "bob"))?.code, -32602);
  });

  test("the federated catalog names every backend's tools <backend>__<name>, and routes each call", async () => {
    const tools = (resultOf(await call(federated(), "tools/list", {}, PLAIN)).tools as JsonObject[]).map((tool) => tool.name as string);
    for (const name of ["everything__echo", "files__read_text_file", "legacy__greet", "legacy__build_report"]) {
      assert.ok(tools.includes(name), `${name} in the federated catalog`);
    }
    for (const name of tools) assert.match(name, /^[A-Za-z0-9_-]{1,64}$/);
    const echo = expectComplete(await callTool(federated(), "everything__echo", { message: "via federation" }, PLAIN));
    assert.match(textOf(echo), /via federation/);
    const read = expectComplete(await callTool(federated(), "files__read_text_file", { path: join(dir, "hello.txt") }, PLAIN));
    assert.match(textOf(read), /hello from the fleet/);
    const greet = expectComplete(await callTool(federated(), "legacy__greet", { name: "fleet" }, PLAIN));
    assert.match(textOf(greet), /Hello, fleet!/);
    const unknown = await callTool(federated(), "nobody__echo", {}, PLAIN);
    assert.equal(errorOf(unknown)?.code, -32602);
  });

  test("one federated listen stream carries task notifications from two backends", async () => {
    const fromLegacy = expectTask(await callTool(federated(), "legacy__slow_echo", { text: "one", ms: 500 }, alice));
    const fromFiles = expectTask(await callTool(federated(), "files__read_text_file", { path: join(dir, "hello.txt") }, alice));
    const ids = [fromLegacy.taskId as string, fromFiles.taskId as string];
    const listen = await openListen(federated(), { taskIds: ids }, { capabilities: TASKS_CAPS });
    try {
      for (const taskId of ids) {
        await listen.waitFor(
          (frame) => {
            const params = (frame.params ?? {}) as JsonObject;
            return params.taskId === taskId && params.status === "completed";
          },
          15_000,
          `completed for ${taskId}`,
        );
      }
    } finally {
      listen.close();
    }
  });

  test("a federated listen stream carries a backend's tools/list_changed, and the new tool is in the federated catalog", async () => {
    const listen = await openListen(federated(), { toolsListChanged: true }, { id: "fleet-tools" });
    try {
      const ack = await listen.waitFor(() => true, 10_000, "the acknowledgement");
      assert.equal(ack.method, "notifications/subscriptions/acknowledged");
      assert.deepEqual((ack.params as JsonObject).notifications, { toolsListChanged: true });
      expectComplete(await callTool(federated(), "legacy__toggle_beta", {}, PLAIN));
      const changed = await listen.waitFor((frame) => frame.method === "notifications/tools/list_changed", 10_000, "tools/list_changed");
      assert.deepEqual(changed.params, { _meta: { "io.modelcontextprotocol/subscriptionId": "fleet-tools" } });
      const tools = (resultOf(await call(federated(), "tools/list", {}, PLAIN)).tools as JsonObject[]).map((tool) => tool.name);
      assert.ok(tools.includes("legacy__beta"), "the federated catalog follows the change");
    } finally {
      listen.close();
      await callTool(federated(), "legacy__toggle_beta", {}, PLAIN);
    }
  });

  test("federated resource subscriptions: each URI's updates come from the backend that lists it, and only for URIs subscribed", async () => {
    const discovered = resultOf(await call(federated(), "server/discover", {}, PLAIN));
    assert.equal((discovered.capabilities as JsonObject & { resources: JsonObject }).resources.subscribe, true, "subscribe is offered");
    const listed = (resultOf(await call(at("everything"), "resources/list", {}, PLAIN)).resources as { uri: string }[]).map((r) => r.uri);
    const [mine, theirs] = listed;
    assert.ok(mine && theirs, `server-everything lists resources: ${listed.join(", ")}`);
    const isUpdateOf = (uri: string) => (frame: JsonObject) =>
      frame.method === "notifications/resources/updated" && (frame.params as JsonObject).uri === uri;
    const asked = [mine, COUNTER, "nobody://listed"];
    const stream = await openListen(federated(), { resourceSubscriptions: asked, toolsListChanged: true }, { id: "fleet-resources" });
    // The same identity's other stream holds `theirs` on the same upstream session of server-everything.
    const other = await openListen(federated(), { resourceSubscriptions: [theirs] }, { id: "fleet-other" });
    try {
      const ack = await stream.waitFor(() => true, 10_000, "the acknowledgement");
      assert.equal(ack.method, "notifications/subscriptions/acknowledged");
      assert.deepEqual((ack.params as JsonObject).notifications, { toolsListChanged: true, resourceSubscriptions: [mine, COUNTER] });
      assert.deepEqual(((await other.waitFor(() => true, 10_000, "the other acknowledgement")).params as JsonObject).notifications, {
        resourceSubscriptions: [theirs],
      });
      // server-everything sends resources/updated for every URI its session subscribed to (both streams' URIs), then every 5 s.
      expectComplete(await callTool(federated(), "everything__toggle-subscriber-updates", {}, PLAIN));
      const updated = await stream.waitFor(isUpdateOf(mine), 10_000, `resources/updated for ${mine}`);
      assert.deepEqual(updated.params, { uri: mine, _meta: { "io.modelcontextprotocol/subscriptionId": "fleet-resources" } });
      await other.waitFor(isUpdateOf(theirs), 10_000, `resources/updated for ${theirs} on the other stream`);
      expectComplete(await callTool(federated(), "legacy__touch_resource", {}, PLAIN));
      await stream.waitFor(isUpdateOf(COUNTER), 10_000, "resources/updated for the legacy server's counter");
      // Both servers' updates have reached taskgate by now: neither stream got the other's URIs.
      const uris = (listen: typeof stream) =>
        listen.frames.filter((f) => f.method === "notifications/resources/updated").map((f) => (f.params as JsonObject).uri);
      assert.deepEqual([...new Set(uris(stream))].sort(), [COUNTER, mine].sort(), "only the URIs this stream subscribed to");
      assert.deepEqual([...new Set(uris(other))], [theirs], "the other stream got only its own URI");
    } finally {
      stream.close();
      other.close();
      await callTool(federated(), "everything__toggle-subscriber-updates", {}, PLAIN);
    }
  });

  test("a federated listen filter that is not well-formed is refused as on a backend's own path", async () => {
    for (const bad of [{ resourceSubscriptions: "example://counter" }, { toolsListChanged: "yes" }, { resourceSubscriptions: [""] }]) {
      const refused = await openListen(federated(), bad);
      assert.equal(refused.status, 200, JSON.stringify(bad));
      assert.equal((refused.json?.error as JsonObject | undefined)?.code, -32602, JSON.stringify(refused.json));
    }
    const undeclared = await openListen(federated(), { taskIds: ["whatever"], toolsListChanged: true }, { capabilities: {} });
    assert.equal(undeclared.status, 400);
    assert.equal((undeclared.json?.error as JsonObject | undefined)?.code, -32021, JSON.stringify(undeclared.json));
  });

  test("an old client at the federated endpoint is refused with -32022 naming the backends' own paths, where it is served", async () => {
    const refused = await legacyRequest(federated(), { body: legacyInitialize(), token: "alice" });
    assert.equal(refused.status, 400);
    const error = refused.message.error as { code: number; message: string; data: JsonObject };
    assert.equal(error.code, -32022);
    assert.match(error.message, /point this client at one backend's own path: \/mcp\/everything, \/mcp\/files, \/mcp\/legacy\./);
    assert.deepEqual(error.data.legacyPaths, ["/mcp/everything", "/mcp/files", "/mcp/legacy"]);
  });

  test("an SDK 1.x client reaches each backend through /mcp/<name>", async () => {
    for (const [name, tool] of [
      ["legacy", "greet"],
      ["everything", "echo"],
      ["files", "list_directory"],
    ] as const) {
      const { client } = await connectLegacyClient(at(name), "alice");
      try {
        const { tools } = await client.listTools();
        assert.ok(
          tools.some((listed) => listed.name === tool),
          `${tool} at /mcp/${name}`,
        );
      } finally {
        await client.close();
      }
    }
  });
});
