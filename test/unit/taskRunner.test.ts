// TaskRunner and TaskAccess over scripted calls, the memory store and the local cluster seams: a
// task's record follows its call (progress, questions, answers, the outcome), answers are checked
// before anything changes, cancel and expiry stop the call, shutdown and a restart fail what can
// never finish; TaskAccess shows a task to its owner only and fails a task whose holder is gone.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createCluster } from "../../src/cluster/createCluster.js";
import { ErrorCode } from "../../src/protocol/errors.js";
import { SHUTDOWN } from "../../src/protocol/reasons.js";
import { SESSION_ENDED } from "../../src/questions/question.js";
import { createTaskStore } from "../../src/tasks/stores/createTaskStore.js";
import { TaskAccess } from "../../src/tasks/taskAccess.js";
import type { TaskRecord } from "../../src/tasks/taskRecord.js";
import { TaskRecords } from "../../src/tasks/taskRecords.js";
import { TaskRunner } from "../../src/tasks/taskRunner.js";
import type { TaskStore } from "../../src/tasks/taskStore.js";
import { log, refusalOf } from "../support/desk.js";
import { formQuestion, ScriptedCall } from "../support/scriptedCall.js";
import { eventually } from "../support/waiting.js";

async function runnerOf(options: { instanceId?: string; ttlMs?: number } = {}) {
  const instanceId = options.instanceId ?? "here";
  const store = await createTaskStore({ kind: "memory" });
  const cluster = await createCluster<TaskRecord>({ kind: "local", instanceId });
  const records = new TaskRecords(store, cluster.bus);
  const runner = new TaskRunner({
    records,
    instanceId,
    settings: { ttlMs: options.ttlMs ?? 60_000, pollIntervalMs: 1_000, inputKeys: {} },
    log,
  });
  const access = new TaskAccess({ records, runner, instanceId, leases: cluster.leases, link: cluster.link, log });
  return { store, records, runner, access };
}

const statusOf = async (records: TaskRecords, taskId: string) => (await records.get(taskId))?.status;

/** A task whose call has asked one form question ("name"), written as input_required. */
async function askingTask(runner: TaskRunner, records: TaskRecords) {
  const call = new ScriptedCall();
  const { taskId } = await runner.start(call, "owner", "tool");
  const asked = call.ask(formQuestion("name"));
  await eventually(async () => (await statusOf(records, taskId)) === "input_required", "the question was written");
  return { call, taskId, ...asked };
}

/** How many update()s the store has run since this call (a spy on the real store). */
function countWrites(store: TaskStore): () => number {
  const update = store.update.bind(store);
  let count = 0;
  store.update = (taskId, mutate) => {
    count += 1;
    return update(taskId, mutate);
  };
  return () => count;
}

/** TEST DOUBLE of a slow store operation, on cue: the store's next update() (a write) or get() (a read) waits until
 *  release() (a real store stalls at no chosen moment). `entered` resolves once that operation has begun. */
function holdNext(store: TaskStore, operation: "update" | "get"): { entered: Promise<void>; release(): void } {
  const original = store[operation].bind(store) as (...args: unknown[]) => Promise<unknown>;
  let release = () => undefined as void;
  let enter = () => undefined as void;
  const entered = new Promise<void>((resolve) => (enter = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
  Object.assign(store, {
    [operation]: async (...args: unknown[]) => {
      Object.assign(store, { [operation]: original });
      enter();
      await gate;
      return original(...args);
    },
  });
  return { entered, release };
}

describe("TaskRunner", () => {
  it("mirrors the call: progress → statusMessage, a question → input_required, the answer → working, the result → completed", async () => {
    const { records, runner } = await runnerOf();
    const call = new ScriptedCall();
    const { taskId, status } = await runner.start(call, "owner", "tool");
    assert.equal(status, "working");
    assert.equal(runner.hosts(taskId), true);

    call.progress({ progress: 1, total: 4, message: "a quarter" });
    await eventually(async () => (await records.get(taskId))?.statusMessage === "a quarter", "the progress was written");

    const { answered } = call.ask(formQuestion("name"));
    await eventually(async () => (await statusOf(records, taskId)) === "input_required", "the question was written");
    assert.deepEqual(Object.keys((await records.get(taskId))?.inputRequests ?? {}), ["name"]);
    assert.deepEqual(runner.countByStatus(), { working: 0, input_required: 1 });

    const bad = await refusalOf(runner.answer(taskId, { name: { action: "accept", content: { name: 42 } } }));
    assert.equal(bad.code, ErrorCode.InvalidParams);
    assert.equal(await statusOf(records, taskId), "input_required", "a bad answer changes nothing");

    await runner.answer(taskId, { name: { action: "accept", content: { name: "Ada" } } });
    assert.equal(await statusOf(records, taskId), "working", "the answered key is gone before answer() resolves");
    assert.deepEqual(await answered, { action: "accept", content: { name: "Ada" } });

    call.finish({ content: [{ type: "text", text: "done" }] });
    await eventually(async () => (await statusOf(records, taskId)) === "completed", "the task completed");
    assert.deepEqual((await records.get(taskId))?.result, { content: [{ type: "text", text: "done" }], resultType: "complete" });
    assert.equal(runner.count(), 0);
  });

  it("an answer that does not fit is refused even when its question is withdrawn while the answer waits its turn", async () => {
    const { records, runner } = await runnerOf();
    const { taskId, withdraw } = await askingTask(runner, records);
    // The answer is checked in the task's turn, after the writes ahead of it; the session ending withdraws the question first.
    const refused = refusalOf(runner.answer(taskId, { name: { action: "accept", content: { name: 42 } } }));
    withdraw();
    assert.equal((await refused).code, ErrorCode.InvalidParams);
    await eventually(async () => (await statusOf(records, taskId)) === "working", "the withdrawn question left the record");
    await runner.answer(taskId, { name: { action: "accept", content: { name: "Ada" } } });
    assert.equal(await statusOf(records, taskId), "working", "an answer to a key no longer open is ignored");
  });

  it("an answer arriving while the task's end is being written is acknowledged only after that write", async () => {
    const { store, records, runner } = await runnerOf();
    const { call, taskId, withdraw } = await askingTask(runner, records);
    withdraw();
    await eventually(async () => (await statusOf(records, taskId)) === "working", "the withdrawn question left the record");
    const held = holdNext(store, "update");
    call.fail({ code: -32603, message: "the upstream session ended" });
    await held.entered;
    let acknowledged = false;
    const answering = runner.answer(taskId, { name: { action: "accept", content: { name: "Ada" } } }).then(() => {
      acknowledged = true;
    });
    await new Promise((resolve) => setImmediate(resolve)); // every step not waiting on the held write has run
    assert.equal(acknowledged, false, "not acknowledged while the task's end is unwritten");
    held.release();
    await answering;
    assert.equal(await statusOf(records, taskId), "failed");
  });

  it("an answer to a question gone with its session is acknowledged only once the failing call's end is written", async () => {
    const { records, runner } = await runnerOf();
    const { call, taskId, withdraw } = await askingTask(runner, records);
    withdraw(SESSION_ENDED); // the call fails with its session, but its failure comes a moment later (named after a probe)
    const answering = runner.answer(taskId, { name: { action: "accept", content: { name: 42 } } }).then(() => statusOf(records, taskId));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(await statusOf(records, taskId), "input_required", "the record still shows the question");
    call.fail({ code: -32603, message: "Upstream call lost: taskgate closed the upstream session" });
    assert.equal(await answering, "failed", "acknowledged after the end was written, never while the task read input_required");
  });

  it("an upstream JSON-RPC error fails the task with that error", async () => {
    const { records, runner } = await runnerOf();
    const call = new ScriptedCall();
    const { taskId } = await runner.start(call, "owner", "tool");
    call.fail({ code: -32602, message: "bad arguments" });
    await eventually(async () => (await statusOf(records, taskId)) === "failed", "the task failed");
    assert.deepEqual((await records.get(taskId))?.error, { code: -32602, message: "bad arguments" });
  });

  it("cancel: the record is cancelled and the call stopped upstream", async () => {
    const { records, runner } = await runnerOf();
    const call = new ScriptedCall();
    const { taskId } = await runner.start(call, "owner", "tool");
    await runner.cancel(taskId);
    assert.equal(await statusOf(records, taskId), "cancelled");
    assert.equal(call.abortedBecause, "task cancelled by the client");
    assert.equal(runner.hosts(taskId), false);
  });

  it("a task whose ttl runs out stops its call and is no longer held (the expired record is gone from the store)", async () => {
    const { records, runner } = await runnerOf({ ttlMs: 30 });
    const call = new ScriptedCall();
    const { taskId } = await runner.start(call, "owner", "tool");
    await eventually(() => call.abortedBecause !== undefined, "the call was stopped");
    assert.equal(call.abortedBecause, "task expired");
    await eventually(() => !runner.hosts(taskId), "the runner let the task go");
    assert.equal(await records.get(taskId), undefined);
  });

  it("shutdown fails the live tasks; the next process fails what a previous one left unfinished", async () => {
    const { store, records, runner } = await runnerOf();
    const call = new ScriptedCall();
    const { taskId } = await runner.start(call, "owner", "tool");
    await runner.shutdown();
    assert.equal(call.abortedBecause, SHUTDOWN.abortReason);
    const record = await records.get(taskId);
    assert.deepEqual([record?.status, record?.statusMessage], ["failed", SHUTDOWN.taskFailed]);

    const orphan: TaskRecord = { ...(record as TaskRecord), taskId: "left-running", status: "working", holder: "dead" };
    delete orphan.statusMessage;
    delete orphan.error;
    await store.create(orphan);
    const next = new TaskRunner({ records, instanceId: "next", settings: { ttlMs: 60_000, pollIntervalMs: 1_000, inputKeys: {} }, log });
    assert.equal(await next.failOrphans(), 1);
    const failed = await records.get("left-running");
    assert.deepEqual([failed?.status, failed?.statusMessage], ["failed", SHUTDOWN.taskOrphaned]);
  });
});

describe("TaskAccess", () => {
  it("a task exists for its owner only: anyone else gets the same -32602 as for an unknown id", async () => {
    const { runner, access } = await runnerOf();
    const { taskId } = await runner.start(new ScriptedCall(), "owner", "tool");
    assert.equal((await access.get("owner", taskId)).taskId, taskId);
    const other = await refusalOf(access.get("someone else", taskId));
    const unknown = await refusalOf(access.get("owner", "no-such-task"));
    assert.deepEqual([other.code, other.message], [unknown.code, unknown.message]);
    await refusalOf(access.cancel("someone else", taskId));
    assert.equal((await access.get("owner", taskId)).status, "working", "another identity's cancel changed nothing");
  });

  it("update and cancel of a task held here go to this instance's runner", async () => {
    const { store, records, runner, access } = await runnerOf();
    const { call, taskId, answered } = await askingTask(runner, records);
    await access.update("owner", taskId, { name: { action: "decline" } });
    assert.deepEqual(await answered, { action: "decline" });
    const writes = countWrites(store);
    await access.cancel("owner", taskId);
    assert.equal(call.abortedBecause, "task cancelled by the client");
    assert.equal((await records.get(taskId))?.status, "cancelled");
    assert.equal(writes(), 1, "held here, the write that ends it is the cancel's only one (nothing recorded first)");
  });

  it("its call fails while a cancel held here reads the record: the cancel wins, the failure named", async () => {
    const { store, records, runner, access } = await runnerOf();
    const call = new ScriptedCall();
    const { taskId } = await runner.start(call, "owner", "tool");
    const reading = holdNext(store, "get");
    const cancelled = access.cancel("owner", taskId);
    await reading.entered;
    call.fail({ code: -32603, message: "Upstream call lost: taskgate closed the upstream session" });
    await eventually(async () => !runner.hosts(taskId), "the call's end was written");
    reading.release();
    await cancelled;
    const ended = await records.get(taskId);
    assert.equal(ended?.status, "cancelled", `ended ${ended?.status}: ${ended?.statusMessage}`);
    assert.match(ended?.statusMessage ?? "", /^Cancelled by the client \(its call ended meanwhile: Upstream call lost/);
  });

  it("another identity's cancel arriving changes nothing: the call's failure is written as it is", async () => {
    const { store, records, runner, access } = await runnerOf();
    const call = new ScriptedCall();
    const { taskId } = await runner.start(call, "owner", "tool");
    const reading = holdNext(store, "get");
    const refused = refusalOf(access.cancel("someone else", taskId));
    await reading.entered;
    call.fail({ code: -32603, message: "Upstream call lost" });
    await eventually(async () => !runner.hosts(taskId), "the call's end was written");
    reading.release();
    await refused;
    assert.equal(await statusOf(records, taskId), "failed");
  });

  it("a running task whose holder instance is gone is failed by whoever looks at it", async () => {
    const { store, records, access } = await runnerOf();
    const created = new Date().toISOString();
    await store.create({
      taskId: "held-elsewhere",
      status: "working",
      createdAt: created,
      lastUpdatedAt: created,
      ttlMs: 60_000,
      ownerHash: "owner",
      tool: "tool",
      holder: "gone-instance",
      version: 0,
    });
    const seen = await access.get("owner", "held-elsewhere");
    assert.deepEqual([seen.status, seen.statusMessage], ["failed", SHUTDOWN.holderGone]);
    assert.equal(await statusOf(records, "held-elsewhere"), "failed");
  });
});
