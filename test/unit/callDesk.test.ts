// CallDesk, the owner of a call's life, over scripted calls, the memory store and the local cluster
// seams: how a policy and the request's declaration decide inline, task or auto; quotas counted
// from the first start to the call's end (a held call that becomes a task moves over); MRTR rounds
// parked and resumed here; a retry whose holder is gone (the local holder link: nobody else) and one
// resumed on its holder through the link (a direct link between two desks: a test double), or met
// by a holder's silence while its lease lives (a double of a paused holder); cache hints; shutdown.

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import type { HolderCommand, HolderLink, ResumeCommand } from "../../src/cluster/holderLink.js";
import { requestOutcome } from "../../src/http/requestOutcome.js";
import { ErrorCode } from "../../src/protocol/errors.js";
import { SHUTDOWN } from "../../src/protocol/reasons.js";
import type { Reply } from "../../src/protocol/reply.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import {
  DirectHolderLink,
  deskOf,
  LeaveFirstHolderLink,
  refusalOf,
  requestOf,
  SilentHolderLink,
  TASKS_CAPS,
  toolOrder,
} from "../support/desk.js";
import { formQuestion } from "../support/scriptedCall.js";
import { eventually } from "../support/waiting.js";

const resultOf = (reply: Reply): JsonObject => {
  assert.equal(reply.kind, "result", JSON.stringify(reply));
  return reply.kind === "result" ? reply.result : {};
};

/** The frames of a stream reply, until it ends. */
async function framesOf(reply: Reply): Promise<JsonObject[]> {
  assert.equal(reply.kind, "stream");
  const frames: JsonObject[] = [];
  if (reply.kind === "stream") for await (const frame of reply.messages) frames.push(frame);
  return frames;
}

const ANSWER = { name: { action: "accept", content: { name: "Ada" } } };

describe("CallDesk: a fresh call", () => {
  it("undeclared (or policy never): started upstream at once, answered inline as JSON", async () => {
    const { desk, calls, starts } = await deskOf();
    const request = requestOf({ name: "echo", arguments: { text: "hi" } });
    const pending = desk.open(request, toolOrder("echo", "auto", { text: "hi" }));
    await eventually(() => calls.length === 1, "the call started");
    assert.equal(starts[0]?.mayBecomeTask, false, "an undeclared request never gets a task");
    assert.deepEqual(starts[0]?.params, { name: "echo", arguments: { text: "hi" } });
    calls[0]?.finish({ content: [{ type: "text", text: "hi" }] });
    assert.deepEqual(resultOf(await pending), { content: [{ type: "text", text: "hi" }], resultType: "complete" });
    assert.equal(request.note.outcome, "result");
  });

  it("declared with policy always: a task, stored before the handle goes out, completed by the call's result", async () => {
    const { desk, calls, records } = await deskOf();
    const request = requestOf({ name: "slow" }, TASKS_CAPS);
    const handle = resultOf(await desk.open(request, toolOrder("slow", "always")));
    assert.equal(handle.resultType, "task");
    const taskId = handle.taskId as string;
    assert.equal(request.note.taskId, taskId);
    assert.equal(request.note.outcome, "task");
    assert.equal((await records.get(taskId))?.status, "working");
    calls[0]?.finish({ content: [] });
    await eventually(async () => (await records.get(taskId))?.status === "completed", "the task completed");
  });

  it("the upstream is asked for progress only when someone reads it: the client's token, or a task the call is or may become", async () => {
    const { desk, calls, starts } = await deskOf();
    type Case = {
      name: string;
      caps?: Parameters<typeof requestOf>[1];
      meta?: Parameters<typeof requestOf>[2];
      policy: Parameters<typeof toolOrder>[1];
    };
    const cases: Array<Case & { asks: boolean }> = [
      { name: "undeclared-no-token", policy: "auto", asks: false },
      { name: "undeclared-own-token", caps: {}, meta: { progressToken: "p" }, policy: "auto", asks: true },
      { name: "declared-auto", caps: TASKS_CAPS, policy: "auto", asks: true },
      { name: "declared-never", caps: TASKS_CAPS, policy: "never", asks: false },
      { name: "declared-always", caps: TASKS_CAPS, policy: "always", asks: true },
    ];
    for (const [i, { name, caps, meta, policy }] of cases.entries()) {
      const pending = desk.open(requestOf({ name }, caps, meta), toolOrder(name, policy));
      await eventually(() => calls.length === i + 1, `${name} started`);
      calls[i]?.finish({ content: [] });
      await pending;
    }
    assert.deepEqual(
      starts.map((start) => `${(start.params as { name: string }).name}: ${start.asksProgress}`),
      cases.map(({ name, asks }) => `${name}: ${asks}`),
    );
  });

  it("a task-only tool (policy required) without the extension declared: -32021, nothing started", async () => {
    const { desk, starts } = await deskOf();
    const error = await refusalOf(desk.open(requestOf({ name: "batch" }), toolOrder("batch", "required")));
    assert.equal(error.code, ErrorCode.MissingRequiredClientCapability);
    assert.equal(starts.length, 0);
  });

  it("policy auto: a call still running after autoAfterMs becomes a task; one that ends in time is inline", async () => {
    const { desk, calls, records } = await deskOf({ settings: { autoAfterMs: 30 } });
    const slow = resultOf(await desk.open(requestOf({ name: "slow" }, TASKS_CAPS), toolOrder("slow", "auto")));
    assert.equal(slow.resultType, "task");
    assert.equal((await records.get(slow.taskId as string))?.status, "working");
    const quick = desk.open(requestOf({ name: "quick" }, TASKS_CAPS), toolOrder("quick", "auto"));
    await eventually(() => calls.length === 2, "the second call started");
    calls[1]?.finish({ content: [] });
    assert.equal(resultOf(await quick).resultType, "complete");
  });

  it("maxHeldCalls: a second inline call of the same owner is refused (429, named) until the first ends", async () => {
    const { desk, calls, starts } = await deskOf({ quotas: { maxHeldCalls: 1 } });
    const first = desk.open(requestOf({ name: "a" }), toolOrder("a", "never"));
    await eventually(() => calls.length === 1, "the first call started");
    const refused = await refusalOf(desk.open(requestOf({ name: "b" }), toolOrder("b", "never")));
    assert.deepEqual([refused.httpStatus, (refused.data as JsonObject).reason], [429, "quota_exceeded"]);
    assert.equal(starts.length, 1, "the refused call was not started");
    calls[0]?.finish({ content: [] });
    await first;
    await calls[0]?.outcome;
    const third = desk.open(requestOf({ name: "c" }), toolOrder("c", "never"));
    await eventually(() => calls.length === 2, "admitted once the first ended");
    calls[1]?.finish({ content: [] });
    await third;
  });

  it("maxRunningTasks: an inline call that became a task (auto) counts as a task", async () => {
    const { desk, calls } = await deskOf({ quotas: { maxRunningTasks: 1 }, settings: { autoAfterMs: 20 } });
    assert.equal(resultOf(await desk.open(requestOf({ name: "slow" }, TASKS_CAPS), toolOrder("slow", "auto"))).resultType, "task");
    const refused = await refusalOf(desk.open(requestOf({ name: "next" }, TASKS_CAPS), toolOrder("next", "always")));
    assert.equal((refused.data as JsonObject).quota, "quotas.maxRunningTasks");
    calls[0]?.finish({ content: [] });
    await calls[0]?.outcome;
    assert.equal(resultOf(await desk.open(requestOf({ name: "next" }, TASKS_CAPS), toolOrder("next", "always"))).resultType, "task");
  });

  it("resources/read: the cache hints on a fresh result", async () => {
    const { desk, calls } = await deskOf();
    const order = { ...toolOrder("file:///a", "never"), method: "resources/read", cache: { ttlMs: 5_000, cacheScope: "public" as const } };
    const pending = desk.open(requestOf({ uri: "file:///a" }), order);
    await eventually(() => calls.length === 1, "the read started");
    calls[0]?.finish({ contents: [] });
    assert.deepEqual(resultOf(await pending), { contents: [], resultType: "complete", ttlMs: 5_000, cacheScope: "public" });
  });
});

describe("CallDesk: MRTR rounds", () => {
  it("a question parks the call (input_required); the retry with the answer resumes it on the retry's request", async () => {
    const { desk, calls, parked } = await deskOf();
    const pending = desk.open(requestOf({ name: "ask" }, { elicitation: {} }), toolOrder("ask", "never"));
    await eventually(() => calls.length === 1, "the call started");
    const { answered } = calls[0]!.ask(formQuestion("name"));
    const round = resultOf(await pending);
    assert.equal(round.resultType, "input_required");
    assert.equal(parked.count(), 1);

    const retry = requestOf({ name: "ask", requestState: round.requestState, inputResponses: ANSWER }, { elicitation: {} });
    const resumed = desk.open(retry, toolOrder("ask", "never"));
    assert.deepEqual(await answered, ANSWER.name);
    calls[0]?.finish({ content: [] });
    assert.equal(resultOf(await resumed).resultType, "complete");
    assert.equal(retry.note.resumed, 1);
    assert.equal(calls.length, 1, "the retry started nothing new");
  });

  it("a parked call the upstream finishes without waiting for its answer: the round's retry gets the result, not 'gone'", async () => {
    const { desk, calls, parked } = await deskOf();
    const pending = desk.open(requestOf({ name: "ask" }, { elicitation: {} }), toolOrder("ask", "never"));
    await eventually(() => calls.length === 1, "the call started");
    calls[0]!.ask(formQuestion("name"));
    const round = resultOf(await pending);
    assert.equal(round.resultType, "input_required");
    calls[0]?.finish({ content: [{ type: "text", text: "done without it" }] });
    await calls[0]!.outcome;
    assert.equal(parked.count(), 1, "kept for the retry of the round that is out");

    const retry = requestOf({ name: "ask", requestState: round.requestState, inputResponses: ANSWER }, { elicitation: {} });
    const result = resultOf(await desk.open(retry, toolOrder("ask", "never")));
    assert.equal(result.resultType, "complete");
    assert.deepEqual(result.content, [{ type: "text", text: "done without it" }]);
    assert.equal(parked.count(), 0, "released once its retry took the result");
    assert.equal(calls.length, 1, "the retry started nothing new");
  });

  it("policy auto: the question is asked inline, and the retry that answers it gets the task", async () => {
    const { desk, calls, records, runner } = await deskOf({ quotas: { maxRunningTasks: 1 } });
    const pending = desk.open(requestOf({ name: "ask" }, TASKS_CAPS), toolOrder("ask", "auto"));
    await eventually(() => calls.length === 1, "the call started");
    calls[0]!.ask(formQuestion("name"));
    const round = resultOf(await pending);
    assert.equal(round.resultType, "input_required");
    const retry = requestOf({ name: "ask", requestState: round.requestState, inputResponses: ANSWER }, TASKS_CAPS);
    const handle = resultOf(await desk.open(retry, toolOrder("ask", "auto")));
    assert.equal(handle.resultType, "task");
    assert.equal(runner.count(), 1);
    assert.equal((await records.get(handle.taskId as string))?.status, "working");
    const refused = await refusalOf(desk.open(requestOf({ name: "x" }, TASKS_CAPS), toolOrder("x", "always")));
    assert.equal((refused.data as JsonObject).quota, "quotas.maxRunningTasks", "the handed-over call counts as a task");
  });

  it("a retry whose requestState names an instance that is gone: -32602 holder_gone, counted as an error (not ok)", async () => {
    const gone = await deskOf({ instanceId: "gone" });
    const pending = gone.desk.open(requestOf({ name: "ask" }, { elicitation: {} }), toolOrder("ask", "never"));
    await eventually(() => gone.calls.length === 1, "the call started on the instance that goes away");
    gone.calls[0]!.ask(formQuestion("name"));
    const round = resultOf(await pending);

    const here = await deskOf({ instanceId: "here" }); // the local holder link: no other instance answers
    const retry = requestOf({ name: "ask", requestState: round.requestState, inputResponses: ANSWER }, { elicitation: {} });
    const reply = await here.desk.open(retry, toolOrder("ask", "never"));
    assert.equal(reply.kind, "error");
    if (reply.kind === "error") {
      assert.equal(reply.error.code, ErrorCode.InvalidParams);
      assert.deepEqual(reply.error.data, { reason: "holder_gone" });
      assert.match(reply.error.message, /instance holding it stopped or does not answer/);
    }
    assert.equal(retry.note.holder, "gone");
    assert.equal(requestOutcome(retry.note, 200, true), "error");
  });
});

const links: DirectHolderLink[] = [];
after(async () => {
  for (const link of links) await link.close();
});

/** A call of `ask` parked on one desk (`names[0]`) for its question, and another desk (`names[1]`) that sends its retries
 *  there: through `sender` (a double over the direct link, if any), reading the holder's lease with `holderAlive`. */
async function parkedOnHolder(
  options: {
    names?: [string, string];
    capabilities?: JsonObject;
    policy?: "auto" | "never";
    sender?: (link: HolderLink) => HolderLink;
    holderAlive?: (id: string) => Promise<boolean>;
  } = {},
) {
  const { names = ["holder", "other"], capabilities = TASKS_CAPS, policy = "auto", sender = (link) => link } = options;
  const holderLink = new DirectHolderLink(names[0]);
  const otherLink = new DirectHolderLink(names[1]);
  links.push(holderLink, otherLink);
  const holder = await deskOf({ instanceId: names[0], link: holderLink });
  const other = await deskOf({
    instanceId: names[1],
    link: sender(otherLink),
    ...(options.holderAlive ? { holderAlive: options.holderAlive } : {}),
  });
  const served: HolderCommand[] = [];
  await holderLink.serve(async (command) => {
    served.push(command);
    return command.kind === "resume" || command.kind === "leave" ? holder.desk.serve(command) : { ok: true };
  });
  const pending = holder.desk.open(requestOf({ name: "ask" }, capabilities), toolOrder("ask", policy));
  await eventually(() => holder.calls.length === 1, "the call started on the holder");
  const { answered } = holder.calls[0]!.ask(formQuestion("name"));
  const { requestState } = resultOf(await pending);
  const retry = () => requestOf({ name: "ask", requestState, inputResponses: ANSWER }, capabilities);
  return { holder, other, answered, retry, served };
}

/** A call parked on "holder", retried through "other" (one retry request). */
async function pair() {
  const parked = await parkedOnHolder();
  return { ...parked, retry: parked.retry() };
}

describe("CallDesk: rounds of a call another instance holds (RemoteRounds, over a direct link)", () => {
  it("the retry reaching another instance is resumed on the holder; its final message comes back", async () => {
    const { holder, other, answered, retry } = await pair();
    const reply = other.desk.open(retry, toolOrder("ask", "never"));
    assert.deepEqual(await answered, ANSWER.name);
    holder.calls[0]?.finish({ content: [{ type: "text", text: "done" }] });
    assert.deepEqual(resultOf(await reply), { content: [{ type: "text", text: "done" }], resultType: "complete" });
    assert.equal(retry.note.holder, "holder");
    assert.equal(retry.note.outcome, "result");
    assert.equal(other.calls.length, 0, "nothing started on the retry's instance");
  });

  it("policy auto: the answered call becomes a task on its holder", async () => {
    const { holder, other, retry } = await pair();
    const handle = resultOf(await other.desk.open(retry, toolOrder("ask", "auto")));
    assert.equal(handle.resultType, "task");
    assert.equal((await holder.records.get(handle.taskId as string))?.holder, "holder");
    assert.equal(holder.runner.count(), 1);
  });

  it("a retrying client that goes away makes the holder cancel the call", async () => {
    const { holder, other, answered, retry } = await pair();
    const reply = other.desk.open(retry, toolOrder("ask", "never"));
    await answered;
    retry.leave();
    await eventually(() => holder.calls[0]?.abortedBecause !== undefined, "the holder cancelled the call");
    assert.equal(retry.note.outcome, "client_disconnected");
    void reply;
  });
});

describe("CallDesk: a retry whose holder falls silent while its lease lives (a double of a paused holder)", () => {
  /** A call parked on a holder that another instance reaches through `sender`, reading its lease with `holderAlive`. */
  const parkedOnPaused = (sender: (link: HolderLink) => HolderLink, holderAlive: (id: string) => Promise<boolean>) =>
    parkedOnHolder({ names: ["paused-holder", "paused-other"], capabilities: { elicitation: {} }, policy: "never", sender, holderAlive });

  it("not taken: 503 round_not_taken, nothing delivered; the same retry sent again resumes the call", async () => {
    const { holder, other, answered, retry } = await parkedOnPaused(
      (link) => new SilentHolderLink(link, 1, false),
      async () => true,
    );
    const first = retry();
    const refused = await other.desk.open(first, toolOrder("ask", "never"));
    assert.equal(refused.kind, "error");
    if (refused.kind === "error") {
      assert.equal(refused.error.httpStatus, 503);
      assert.deepEqual(refused.error.data, { reason: "round_not_taken" });
      assert.match(refused.error.message, /the call was not resumed and still waits for these answers; send this same request again/);
    }
    assert.equal(requestOutcome(first.note, 503, true), "failed");
    assert.deepEqual(holder.desk.held(), { inline: 0, parked: 1 }, "the call still waits on its holder");
    const again = other.desk.open(retry(), toolOrder("ask", "never"));
    assert.deepEqual(await answered, ANSWER.name);
    holder.calls[0]?.finish({ content: [{ type: "text", text: "done" }] });
    assert.deepEqual(resultOf(await again), { content: [{ type: "text", text: "done" }], resultType: "complete" });
  });

  it("taken, then silent: 503 round_unanswered (the answers may have arrived); sent again, the used state is refused", async () => {
    const { holder, other, answered, retry } = await parkedOnPaused(
      (link) => new SilentHolderLink(link, 1, true),
      async () => true,
    );
    const refused = await other.desk.open(retry(), toolOrder("ask", "never"));
    assert.equal(refused.kind, "error");
    if (refused.kind === "error") {
      assert.equal(refused.error.httpStatus, 503);
      assert.deepEqual(refused.error.data, { reason: "round_unanswered" });
      assert.match(refused.error.message, /the answers may have reached the call/);
    }
    assert.deepEqual(await answered, ANSWER.name, "the holder had resumed the call");
    holder.calls[0]?.finish({ content: [{ type: "text", text: "done" }] });
    const again = await other.desk.open(retry(), toolOrder("ask", "never"));
    assert.equal(again.kind, "error", "the holder refuses a state it already used");
    if (again.kind === "error") {
      assert.equal(again.error.code, ErrorCode.InvalidParams);
      assert.match(again.error.message, /is gone \(finished, cancelled or expired\)|already used/);
    }
  });

  it("silent, and its lease cannot be read: 503 store_unavailable naming the holder", async () => {
    const { holder, other, retry } = await parkedOnPaused(
      (link) => new SilentHolderLink(link, 1, false),
      async () => {
        throw new Error("connection refused");
      },
    );
    const refused = await other.desk.open(retry(), toolOrder("ask", "never"));
    assert.equal(refused.kind, "error");
    if (refused.kind === "error") {
      assert.equal(refused.error.httpStatus, 503);
      assert.deepEqual(refused.error.data, { reason: "store_unavailable" });
      assert.match(refused.error.message, /instance paused-holder, which holds the call, is still running: connection refused/);
    }
    assert.deepEqual(holder.desk.held(), { inline: 0, parked: 1 });
  });

  it("its client leaves before the holder resumed it (the holder waited for the go): not resumed, the call still waits", async () => {
    const { holder, other, answered, retry } = await parkedOnPaused(
      (link) => new LeaveFirstHolderLink(link),
      async () => true,
    );
    const leaving = retry();
    const reply = other.desk.open(leaving, toolOrder("ask", "never"));
    leaving.leave();
    const refused = await reply;
    assert.equal(refused.kind, "error");
    if (refused.kind === "error") assert.match(refused.error.message, /went away before the call was resumed/);
    assert.equal(holder.calls[0]?.abortedBecause, undefined, "the call was not cancelled");
    assert.deepEqual(holder.desk.held(), { inline: 0, parked: 1 }, "the call still waits on its holder");
    const again = other.desk.open(retry(), toolOrder("ask", "never"));
    assert.deepEqual(await answered, ANSWER.name, "the retry sent again resumed it");
    holder.calls[0]?.finish({ content: [{ type: "text", text: "done" }] });
    assert.equal(resultOf(await again).resultType, "complete");
  });

  it("a leave names its forwarding: another forwarding's leave does not cancel the retry being resumed; its own does", async () => {
    const { holder, other, answered, retry, served } = await parkedOnPaused(
      (link) => link,
      async () => true,
    );
    const resuming = retry();
    void other.desk.open(resuming, toolOrder("ask", "never"));
    await answered;
    const resume = served.find((command): command is ResumeCommand => command.kind === "resume");
    assert.ok(resume?.retryId, "the forwarding carries its retryId");
    const { ownerHash, requestState } = resume;
    assert.deepEqual(await holder.desk.serve({ kind: "leave", ownerHash, requestState, retryId: "another-forwarding" }), { ok: true });
    assert.equal(holder.calls[0]?.abortedBecause, undefined, "another forwarding's leave left the call alone");
    resuming.leave();
    await eventually(() => holder.calls[0]?.abortedBecause !== undefined, "its own leave cancelled the call");
  });

  it("silent, and its lease is gone: -32602 holder_gone", async () => {
    const { other, retry } = await parkedOnPaused(
      (link) => new SilentHolderLink(link, 1, false),
      async () => false,
    );
    const error = await other.desk.open(retry(), toolOrder("ask", "never"));
    assert.equal(error.kind, "error");
    if (error.kind === "error")
      assert.deepEqual([error.error.code, error.error.data], [ErrorCode.InvalidParams, { reason: "holder_gone" }]);
  });
});

describe("CallDesk: shutdown", () => {
  it("inline calls end with shutting_down after the grace period, parked calls are cancelled, live tasks fail", async () => {
    const { desk, calls, records } = await deskOf();
    const streaming = desk.open(requestOf({ name: "long" }, {}, { progressToken: "p" }), toolOrder("long", "never"));
    await eventually(() => calls.length === 1, "the inline call started");
    calls[0]?.progress({ progress: 1 });
    const frames = framesOf(await streaming);

    const asking = desk.open(requestOf({ name: "ask" }, { elicitation: {} }), toolOrder("ask", "never"));
    await eventually(() => calls.length === 2, "the parked call started");
    calls[1]!.ask(formQuestion("name"));
    assert.equal(resultOf(await asking).resultType, "input_required");

    const handle = resultOf(await desk.open(requestOf({ name: "task" }, TASKS_CAPS), toolOrder("task", "always")));
    assert.deepEqual(desk.held(), { inline: 1, parked: 1 });

    await desk.shutdown(20);
    const last = (await frames).at(-1);
    assert.deepEqual(last?.error, { code: -32603, message: "taskgate is shutting down", data: { reason: "shutting_down" } });
    assert.equal(calls[0]?.abortedBecause, SHUTDOWN.abortReason);
    assert.equal(calls[1]?.abortedBecause, SHUTDOWN.abortReason);
    const record = await records.get(handle.taskId as string);
    assert.deepEqual([record?.status, record?.statusMessage], ["failed", SHUTDOWN.taskFailed]);
    assert.deepEqual(desk.held(), { inline: 0, parked: 0 });
  });
});
