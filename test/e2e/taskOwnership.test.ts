// E2E: who may see a task. A task is bound to the subject that created it; for anyone else it
// does not exist (the same -32602 as a random unknown id) and their attempts change nothing.
// Also: bearer required (401), the extension gate before any lookup (-32021), unguessable ids,
// and the `tokens` identity mode (sha256-hashed bearer tokens mapped to subjects).
// Run: node --import tsx --test test/e2e/taskOwnership.test.ts

import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { ElicitationAnsweredEvent } from "../../examples/legacy-server/state.js";
import { type JsonObject, TASKS_EXTENSION } from "../../src/protocol/wire.js";
import { rpc } from "../support/mcpClient.js";
import { type Stack, startStack } from "../support/stack.js";
import { textOf } from "../support/taskShapes.js";
import {
  assertRpcError,
  callTool,
  cancelTask,
  createTask,
  getTask,
  hasStatus,
  keysOf,
  TERMINAL,
  taskRpc,
  updateTask,
  waitForTask,
} from "../support/tasks.js";
import { nextEvent } from "../support/waiting.js";

const SPEED = 20;
const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const randomId = () => randomBytes(20).toString("base64url");
const idOf = (task: JsonObject) => task.taskId as string;

const stacks: Stack[] = [];
after(async () => {
  for (const s of stacks.splice(0)) await s.close();
});

/** The three task methods with params for a task id (update carries a valid answer for 'charts'). */
const attempts = (taskId: string): Array<[string, JsonObject]> => [
  ["tasks/get", { taskId }],
  ["tasks/update", { taskId, inputResponses: { charts: { action: "accept", content: { charts: true } } } }],
  ["tasks/cancel", { taskId }],
];

describe("demo identity: tasks belong to their creator", () => {
  let s: Stack;
  before(async () => {
    s = await startStack({ speed: SPEED, config: { tasks: { policy: "always" } } });
    stacks.push(s);
  });

  test("bob gets exactly what an unknown id gets, and alice's task is unchanged", async () => {
    const task = await createTask(s.url, "build_report", { month: "2025-01" }, { token: "alice" });
    const waiting = await waitForTask(s.url, idOf(task), hasStatus("input_required"));
    assert.deepEqual(keysOf(waiting), ["charts"]);

    let answeredUpstream = false;
    const listener = () => (answeredUpstream = true);
    s.legacy.events.on("elicitation-answered", listener);
    for (const [method, params] of attempts(idOf(task))) {
      const asBob = await taskRpc(s.url, method, params, "bob");
      const unknown = await taskRpc(s.url, method, { ...params, taskId: randomId() }, "bob");
      const bobError = assertRpcError(asBob, -32602);
      const unknownError = assertRpcError(unknown, -32602);
      assert.deepEqual(bobError, unknownError, `${method}: bob's answer must not reveal that the task exists`);
      assert.equal(asBob.status, unknown.status);
      // Even alice's own unknown-id answer is the same.
      assert.deepEqual(assertRpcError(await taskRpc(s.url, method, { ...params, taskId: randomId() }, "alice"), -32602), unknownError);
    }
    s.legacy.events.off("elicitation-answered", listener);
    assert.equal(answeredUpstream, false, "bob's tasks/update never reached the upstream");

    const still = await getTask(s.url, idOf(task), "alice");
    assert.deepEqual(still, waiting, "bob's get/update/cancel changed nothing");

    const answered = nextEvent<ElicitationAnsweredEvent>(s.legacy.events, "elicitation-answered", (e) => e.tool === "build_report");
    await updateTask(s.url, idOf(task), { charts: { action: "accept", content: { charts: true } } }, "alice");
    assert.equal((await answered).action, "accept");
    const done = await waitForTask(s.url, idOf(task), TERMINAL, { token: "alice" });
    assert.equal(done.status, "completed");
    assert.match(textOf(done.result), /charts included/);
    // Finished or not, bob still cannot see it.
    assertRpcError(await taskRpc(s.url, "tasks/get", { taskId: idOf(task) }, "bob"), -32602);
  });

  test("subjects are exact: 'Alice' is not alice", async () => {
    const task = await createTask(s.url, "greet", { name: "x" }, { token: "alice" });
    assertRpcError(await taskRpc(s.url, "tasks/get", { taskId: idOf(task) }, "Alice"), -32602);
    assert.equal((await getTask(s.url, idOf(task), "alice")).taskId, idOf(task));
  });

  test("no bearer ⇒ 401 with WWW-Authenticate, on tools/call and on tasks/*", async () => {
    const task = await createTask(s.url, "greet", { name: "x" });
    const call = await rpc(s.url, "tools/call", { name: "greet", arguments: { name: "x" } }, { token: null });
    assert.equal(call.status, 401);
    assert.match(call.headers.get("www-authenticate") ?? "", /^Bearer(\s|$)/);
    for (const [method, params] of attempts(idOf(task))) {
      const reply = await rpc(s.url, method, params, { token: null, capabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
      assert.equal(reply.status, 401, `${method} without a bearer`);
      assert.ok(reply.message.error, "401 carries a JSON-RPC error");
      assert.ok(!("result" in reply.message));
    }
    const malformed = await rpc(
      s.url,
      "tasks/get",
      { taskId: idOf(task) },
      { token: null, headers: { Authorization: "Basic YWxpY2U6eA==" } },
    );
    assert.equal(malformed.status, 401);
  });

  test("tasks/* without the extension ⇒ -32021 (HTTP 400), before any lookup", async () => {
    const task = await createTask(s.url, "greet", { name: "x" });
    for (const id of [idOf(task), randomId()]) {
      for (const [method, params] of attempts(id)) {
        const reply = await rpc(s.url, method, params, { capabilities: {} });
        const error = assertRpcError(reply, -32021, 400);
        assert.deepEqual(error.data, { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
      }
    }
    // The gate comes before the owner check too: bob gets -32021, not -32602.
    assertRpcError(await rpc(s.url, "tasks/get", { taskId: idOf(task) }, { capabilities: {}, token: "bob" }), -32021, 400);
  });

  test("task ids carry ≥ 128 bits (≥ 22 base64url characters) and differ", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(idOf(await createTask(s.url, "greet", { name: `n${i}` })));
    for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{22,}$/, `task id '${id}' is header-safe base64url with ≥ 128 bits`);
    assert.equal(new Set(ids).size, ids.length);
  });
});

describe("tokens identity mode", () => {
  let s: Stack;
  before(async () => {
    s = await startStack({
      speed: SPEED,
      config: {
        auth: {
          mode: "tokens",
          tokens: [
            { sha256: sha256("s3cret-alice"), subject: "alice" },
            { sha256: sha256("s3cret-alice-laptop"), subject: "alice" },
            { sha256: sha256("s3cret-bob"), subject: "bob" },
          ],
        },
        tasks: { policy: "always" },
      },
    });
    stacks.push(s);
  });

  test("a valid token works; an unknown token, the subject's name or the hash itself ⇒ 401", async () => {
    const ok = await callTool(s.url, "greet", { name: "Ada" }, { token: "s3cret-alice" });
    assert.equal(ok.status, 200);
    assert.ok(ok.message.result, JSON.stringify(ok.message));
    for (const token of ["s3cret-mallory", "alice", sha256("s3cret-alice")]) {
      const reply = await callTool(s.url, "greet", { name: "Ada" }, { token });
      assert.equal(reply.status, 401, `token '${token}'`);
      assert.match(reply.headers.get("www-authenticate") ?? "", /^Bearer /);
    }
  });

  test("a task is bound to the subject, not to the token", async () => {
    const task = await createTask(s.url, "build_report", { month: "2025-06" }, { token: "s3cret-alice" });
    await waitForTask(s.url, idOf(task), hasStatus("input_required"), { token: "s3cret-alice" });
    // Another token of the same subject sees and drives it.
    const sameSubject = await getTask(s.url, idOf(task), "s3cret-alice-laptop");
    assert.equal(sameSubject.status, "input_required");
    // Bob's valid token: as if the task did not exist.
    const asBob = assertRpcError(await taskRpc(s.url, "tasks/get", { taskId: idOf(task) }, "s3cret-bob"), -32602);
    const unknown = assertRpcError(await taskRpc(s.url, "tasks/get", { taskId: randomId() }, "s3cret-bob"), -32602);
    assert.deepEqual(asBob, unknown);
    assertRpcError(await taskRpc(s.url, "tasks/cancel", { taskId: idOf(task) }, "s3cret-bob"), -32602);
    assert.equal((await getTask(s.url, idOf(task), "s3cret-alice")).status, "input_required");
    // An unknown token never reaches the lookup.
    assert.equal((await taskRpc(s.url, "tasks/get", { taskId: idOf(task) }, "s3cret-mallory")).status, 401);

    await updateTask(s.url, idOf(task), { charts: { action: "decline" } }, "s3cret-alice-laptop");
    const done = await waitForTask(s.url, idOf(task), TERMINAL, { token: "s3cret-alice" });
    assert.equal(done.status, "completed");
    assert.match(textOf(done.result), /declined/);
    await cancelTask(s.url, idOf(task), "s3cret-alice");
  });
});
