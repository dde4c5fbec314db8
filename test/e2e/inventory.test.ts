// E2E: the task inventory over real HTTP in front of the real example legacy server (its asking
// tools build_report and run_suite). alice sees her tasks newest first, filtered and paged; bob
// sees none of hers and gets 404 on her task id; the operator sees both with their owners; answers
// go through POST /tasks/{id}/input (a wrong value is a 422 naming the field, and the question stays
// open); cancel; the operator fails a task with a reason (its upstream call is cancelled); the
// events stream pushes each change without polling; the summary counts tasks by state.
// Run: node --import tsx --test test/e2e/inventory.test.ts

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { JsonObject } from "../../src/protocol/wire.js";
import { api, baseOf, nextMatching, openEvents } from "../support/inventory.js";
import { type Stack, startStack } from "../support/stack.js";
import { createTask, hasStatus, waitForTask } from "../support/tasks.js";
import { nextEvent } from "../support/waiting.js";

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const ALICE = "alice-token-0123456789";
const BOB = "bob-token-0123456789";
const OPS = "ops-token-0123456789";
const idOf = (task: JsonObject) => task.taskId as string;
const idsOf = (body: JsonObject) => (body.tasks as JsonObject[]).map(idOf);

describe("task inventory", () => {
  let s: Stack;
  let base: string;
  const alice: string[] = []; // her task ids, oldest first
  let bobTask = "";

  before(async () => {
    s = await startStack({
      speed: 20,
      config: {
        auth: {
          mode: "tokens",
          tokens: [
            { sha256: sha256(ALICE), subject: "alice" },
            { sha256: sha256(BOB), subject: "bob" },
            { sha256: sha256(OPS), subject: "ops", scopes: ["taskgate:operate"] },
          ],
        },
        inventory: { operators: { scopes: ["taskgate:operate"] } },
        tasks: { policy: "always" },
      },
    });
    base = baseOf(s.url);
    for (const tool of ["build_report", "build_report", "run_suite"]) {
      const task = await createTask(s.url, tool, tool === "build_report" ? { month: "2026-01" } : {}, { token: ALICE });
      alice.push(idOf(task));
    }
    bobTask = idOf(await createTask(s.url, "build_report", { month: "2026-02" }, { token: BOB }));
    for (const id of alice.slice(0, 2)) await waitForTask(s.url, id, hasStatus("input_required"), { token: ALICE });
  });
  after(async () => s?.close());

  test("/me says who the caller is and whether they are an operator; no token is a 401 with a challenge", async () => {
    assert.deepEqual((await api(base, "GET", "/me", ALICE)).body, { subject: "alice", operator: false, scopes: [] });
    assert.deepEqual((await api(base, "GET", "/me", OPS)).body, { subject: "ops", operator: true, scopes: ["taskgate:operate"] });
    const anonymous = await api(base, "GET", "/tasks", null);
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.headers.get("www-authenticate") ?? "", /^Bearer/);
    assert.equal((anonymous.body.error as JsonObject).code, "unauthenticated");
  });

  test("alice lists her own tasks newest first, filtered and paged; no-store", async () => {
    const all = await api(base, "GET", "/tasks", ALICE);
    assert.equal(all.status, 200);
    assert.equal(all.headers.get("cache-control"), "no-store");
    assert.deepEqual(idsOf(all.body), [...alice].reverse());
    const first = await api(base, "GET", "/tasks?limit=2", ALICE);
    assert.deepEqual(idsOf(first.body), [alice[2], alice[1]]);
    assert.equal(typeof first.body.nextCursor, "string");
    const second = await api(base, "GET", `/tasks?limit=2&cursor=${first.body.nextCursor as string}`, ALICE);
    assert.deepEqual(idsOf(second.body), [alice[0]]);
    assert.equal(second.body.nextCursor, undefined);
    const reports = await api(base, "GET", "/tasks?tool=build_report&status=input_required,completed", ALICE);
    assert.deepEqual(idsOf(reports.body), [alice[1], alice[0]]);
    const item = (reports.body.tasks as JsonObject[])[0] as JsonObject;
    assert.equal(item.tool, "build_report");
    assert.equal(item.status, "input_required");
    const question = (item.inputRequests as JsonObject).charts as JsonObject;
    assert.equal(question.method, "elicitation/create");
    assert.equal((question.params as JsonObject).message, "Include charts?");
    assert.equal(typeof item.createdAt, "string");
    assert.equal(item.ownerHash, undefined, "no owner hash leaves");
    assert.equal((await api(base, "GET", "/tasks?limit=0", ALICE)).status, 400);
    assert.equal((await api(base, "GET", "/tasks?status=sleeping", ALICE)).status, 400);
    assert.equal(((await api(base, "GET", "/tasks?cursor=bogus", ALICE)).body.error as JsonObject).code, "invalid_cursor");
  });

  test("bob sees none of alice's tasks, and her task id is a 404 on every route, like an unknown one", async () => {
    assert.deepEqual(idsOf((await api(base, "GET", "/tasks", BOB)).body), [bobTask]);
    const id = alice[0] as string;
    const unknown = await api(base, "GET", "/tasks/no-such-task", BOB);
    assert.equal(unknown.status, 404);
    for (const [method, path, body] of [
      ["GET", `/tasks/${id}`, undefined],
      ["POST", `/tasks/${id}/input`, { inputResponses: { charts: { action: "accept", content: { charts: true } } } }],
      ["POST", `/tasks/${id}/cancel`, undefined],
    ] as const) {
      const reply = await api(base, method, path, BOB, body);
      assert.equal(reply.status, 404, `${method} ${path}`);
      assert.deepEqual(reply.body, unknown.body);
    }
    assert.equal((await openEvents(base, `/tasks/${id}/events`, BOB)).status, 404);
    assert.equal((await api(base, "GET", `/tasks/${id}`, ALICE)).body.status, "input_required", "unchanged");
    assert.equal((await api(base, "GET", "/admin/tasks", BOB)).status, 403);
  });

  test("the operator sees every owner's tasks with owner, holder and age, and may filter by owner", async () => {
    const all = await api(base, "GET", "/admin/tasks", OPS);
    assert.equal(all.status, 200);
    const tasks = all.body.tasks as JsonObject[];
    assert.deepEqual(tasks.map(idOf), [bobTask, ...[...alice].reverse()]);
    assert.deepEqual(
      tasks.map((task) => task.owner),
      ["bob", "alice", "alice", "alice"],
    );
    const waiting = tasks.find((task) => task.taskId === alice[0]) as JsonObject;
    assert.equal(typeof waiting.holder, "string");
    assert.ok((waiting.ageMs as number) >= 0);
    assert.ok((waiting.inputRequiredForMs as number) >= 0);
    assert.deepEqual(idsOf((await api(base, "GET", "/admin/tasks?owner=bob", OPS)).body), [bobTask]);
  });

  test("an answer via POST /tasks/{id}/input: a wrong value is a 422 naming the field; a right one completes the task, seen live", async () => {
    const id = alice[0] as string;
    const events = await openEvents(base, `/tasks/${id}/events`, ALICE);
    assert.equal(events.status, 200);
    const firstFrame = await events.next();
    assert.equal(firstFrame.status, "input_required", "the first frame is the current state");

    const wrong = await api(base, "POST", `/tasks/${id}/input`, ALICE, {
      inputResponses: { charts: { action: "accept", content: { charts: "yes" } } },
    });
    assert.equal(wrong.status, 422, JSON.stringify(wrong.body));
    const error = wrong.body.error as JsonObject;
    assert.equal(error.code, "invalid_answer");
    assert.equal(error.field, "charts");
    assert.match(error.message as string, /'charts' must be a boolean/);
    assert.equal((await api(base, "GET", `/tasks/${id}`, ALICE)).body.status, "input_required", "the question stays open");
    const unknownKey = await api(base, "POST", `/tasks/${id}/input`, ALICE, { inputResponses: { nope: { action: "cancel" } } });
    assert.equal(unknownKey.status, 409);
    const notJson = await fetch(`${base}/tasks/${id}/input`, { method: "POST", headers: { Authorization: `Bearer ${ALICE}` }, body: "{" });
    assert.equal(notJson.status, 400);
    const huge = { inputResponses: { charts: { action: "accept", content: { charts: true, pad: "x".repeat(2_000_000) } } } };
    assert.equal((await api(base, "POST", `/tasks/${id}/input`, ALICE, huge)).status, 413);

    const answered = nextEvent(s.legacy.events, "elicitation-answered", (e: { tool: string }) => e.tool === "build_report");
    const right = await api(base, "POST", `/tasks/${id}/input`, ALICE, {
      inputResponses: { charts: { action: "accept", content: { charts: true } } },
    });
    assert.equal(right.status, 200, JSON.stringify(right.body));
    assert.notEqual(right.body.status, "input_required");
    await answered;
    const frames = await nextMatching(events, (frame) => frame.status === "completed");
    assert.ok(frames.length >= 1);
    await events.ended; // the stream ends once the task is terminal
    const again = await api(base, "POST", `/tasks/${id}/input`, ALICE, {
      inputResponses: { charts: { action: "accept", content: { charts: true } } },
    });
    assert.equal(again.status, 409, "a finished task has no question");

    const detail = (await api(base, "GET", `/tasks/${id}`, ALICE)).body;
    assert.equal(detail.resultType, "complete");
    assert.equal(detail.result, undefined, "the result itself is fetched via MCP");
    const states = (detail.history as JsonObject[]).map((entry) => entry.status);
    assert.deepEqual(states, ["working", "input_required", "working", "completed"]);
  });

  test("the caller's stream shows changes to any of their tasks; alice cancels one", async () => {
    const id = alice[1] as string;
    const events = await openEvents(base, "/tasks/events", ALICE);
    const cancelled = await api(base, "POST", `/tasks/${id}/cancel`, ALICE);
    assert.equal(cancelled.status, 200);
    assert.equal(cancelled.body.status, "cancelled");
    const frames = await nextMatching(events, (frame) => frame.taskId === id && frame.status === "cancelled");
    assert.ok(
      frames.every((frame) => alice.includes(idOf(frame))),
      "only her own tasks",
    );
    events.close();
  });

  test("the operator fails alice's stuck task with a reason: the upstream call is cancelled", async () => {
    const id = alice[2] as string;
    const upstreamCancelled = nextEvent(s.legacy.events, "cancelled", (e: { tool: string }) => e.tool === "run_suite");
    assert.equal((await api(base, "POST", `/admin/tasks/${id}/fail`, OPS, {})).status, 400, "a reason is required");
    assert.equal((await api(base, "POST", `/admin/tasks/${id}/fail`, ALICE, { reason: "x" })).status, 403);
    const failed = await api(base, "POST", `/admin/tasks/${id}/fail`, OPS, { reason: "stuck for an hour; rerun it" });
    assert.equal(failed.status, 200, JSON.stringify(failed.body));
    assert.equal(failed.body.status, "failed");
    assert.equal(failed.body.statusMessage, "stuck for an hour; rerun it");
    assert.equal(failed.body.owner, "alice");
    await upstreamCancelled;
    const mine = (await api(base, "GET", `/tasks/${id}`, ALICE)).body;
    assert.equal(mine.status, "failed");
    assert.equal(mine.statusMessage, "stuck for an hour; rerun it");
    const cancelled = await api(base, "POST", `/admin/tasks/${bobTask}/cancel`, OPS);
    assert.equal(cancelled.status, 200);
    assert.equal(cancelled.body.status, "cancelled");
    assert.equal((await api(base, "POST", "/admin/tasks/no-such-task/cancel", OPS)).status, 404);
  });

  test("the summary: tasks by state, waiting questions oldest first, held calls, sessions, instances", async () => {
    const waitingId = idOf(await createTask(s.url, "build_report", { month: "2026-03" }, { token: BOB }));
    await waitForTask(s.url, waitingId, hasStatus("input_required"), { token: BOB });
    const summary = await api(base, "GET", "/admin/summary", OPS);
    assert.equal(summary.status, 200, JSON.stringify(summary.body));
    const byState = summary.body.tasksByState as JsonObject;
    assert.deepEqual(byState, { working: 0, input_required: 1, completed: 1, failed: 1, cancelled: 2 });
    assert.deepEqual((summary.body.waiting as JsonObject[]).map(idOf), [waitingId]);
    assert.equal((summary.body.waiting as JsonObject[])[0]?.owner, "bob");
    assert.equal(typeof summary.body.heldCalls, "number");
    assert.ok(Array.isArray(summary.body.upstreamSessions));
    assert.ok(Array.isArray(summary.body.processes));
    const instances = summary.body.instances as JsonObject[];
    assert.equal(instances.length, 1);
    assert.equal(instances[0]?.self, true);
    assert.ok((summary.body.history as JsonObject[]).length >= 1, "the first sample is taken at start");
    assert.equal((await api(base, "GET", "/admin/summary", ALICE)).status, 403);
  });
});
