// Answers to a build_report task whose holder, taskgate A (a real child process on Redis, in front
// of the real example legacy server), is frozen (SIGSTOP) while the task waits for its question.
// - Past its lease: B closes A's upstream session as one a dead instance left. A wakes, and at once
//   a call of the same user on A finds the session gone (404) and A drops it, failing the task's call
//   with it, while an invalid answer comes through B. Until the call's failure is recorded (its error
//   is named after a probe of the backend) the record still shows the question: the answer must be
//   refused, or acknowledged only once the task's end is written, never while the task still reads
//   input_required. Found by the chaos run.
// - Within its lease (decision 0045): an answer through B meets A's silence; A is not taken for
//   gone, so the client gets 503 holder_unresponsive and the task goes on. Sent again once A runs,
//   the answer is delivered (or ignored, if A found the first as it woke): one answer upstream.
// - An inline call's MRTR round, the same way (decision 0046): the retry through B meets A's
//   silence and gets 503 round_not_taken; A, woken, drops the retry B no longer waits for (it asks
//   B first), and the same retry sent again resumes the call: one answer upstream, one run.

import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { after, before, test } from "node:test";
import type { ElicitationAnsweredEvent, ToolStartedEvent } from "../../examples/legacy-server/state.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { rpcWithin } from "../support/boundedRpc.js";
import { type ChildCluster, startChildCluster } from "../support/childCluster.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { ANSWER_WITHIN_MS } from "../support/limits.js";
import { errorOf, resultOf } from "../support/mcpClient.js";
import { needsRedis } from "../support/redisServer.js";
import { pollTask, TASKS_AND_FORMS } from "../support/tasks.js";
import { eventually, nextEvent } from "../support/waiting.js";

failIfStillRunning();

const LEASE_MS = 1_000;
/** Longer than the holder link's 3 s of silence: a holder frozen that long still holds its lease. */
const LONG_LEASE_MS = 10_000;
let cluster: ChildCluster;

/** A gateway's config on a lease of `leaseMs`. Its upstream pings get 5 s, not the fault tests' 500 ms: a gateway woken
 *  from a freeze serves its backlog first, and on a loaded machine a 500 ms ping then ended its upstream session (and
 *  the call these tests follow) now and then. Pings are not what these tests are about (upstreamTimeLimits is). */
function configOf(leaseMs: number): JsonObject {
  const config = cluster.config(leaseMs);
  return { ...config, upstream: { ...(config.upstream as JsonObject), pingTimeoutMs: 5_000 } };
}

before(async () => {
  cluster = await startChildCluster({ speed: 20 });
});
after(() => cluster?.close());

/** `work` done while `child` is frozen (SIGSTOP); thawed (SIGCONT) however it ends. */
async function whileFrozen<T>(child: ChildProcess, work: () => Promise<T>): Promise<T> {
  child.kill("SIGSTOP");
  try {
    return await work();
  } finally {
    child.kill("SIGCONT");
  }
}

/** The legacy server's `event`s for `tool` from now on (stop() ends the recording). */
function recordUpstream<T extends { tool: string }>(event: string, tool: string): { seen: T[]; stop: () => void } {
  const seen: T[] = [];
  const listener = (payload: T) => void (payload.tool === tool && seen.push(payload));
  cluster.legacy.events.on(event, listener);
  return { seen, stop: () => void cluster.legacy.events.off(event, listener) };
}

/** A and B (`names`) on a lease of `leaseMs`, and a build_report task held by A, waiting for its one question. */
async function reportWaitingOnA(leaseMs: number, names: [string, string]) {
  const config = { ...configOf(leaseMs), tasks: { tools: { build_report: "always" } } };
  const a = await cluster.processes.start(config, names[0]);
  const b = await cluster.processes.start(config, names[1]);
  const report = { name: "build_report", arguments: { month: names[0] } };
  const created = await rpcWithin(ANSWER_WITHIN_MS, a.url, "tools/call", report, { capabilities: TASKS_AND_FORMS });
  const taskId = resultOf(created).taskId as string;
  const asking = await pollTask(a.url, taskId, (t) => t.status === "input_required", { timeoutMs: ANSWER_WITHIN_MS });
  assert.deepEqual(Object.keys(asking.inputRequests as object), ["charts"]);
  return { a, b, taskId };
}

test(
  "an answer sent as a holder wakes without its upstream session is refused, or acknowledged only after the task's end is written",
  needsRedis,
  async () => {
    const { a, b, taskId } = await reportWaitingOnA(LEASE_MS, ["a", "b"]);
    const sessionClosed = nextEvent(cluster.legacy.events, "session-closed", () => true, LEASE_MS * 10);
    await whileFrozen(a.child, () => sessionClosed); // B took A for dead and closed its upstream sessions
    const greet = rpcWithin(
      ANSWER_WITHIN_MS,
      a.url,
      "tools/call",
      { name: "greet", arguments: { name: "z" } },
      { capabilities: TASKS_AND_FORMS },
    );
    const invalid = { charts: { action: "accept", content: { charts: "yes" } } };
    const answered = await rpcWithin(
      ANSWER_WITHIN_MS,
      b.url,
      "tasks/update",
      { taskId, inputResponses: invalid },
      { capabilities: TASKS_AND_FORMS },
    );
    const answeredAt = Date.now();
    assert.match(JSON.stringify(resultOf(await greet).content), /Hello, z!/, "A's next call went to a new session");
    const ended = await pollTask(b.url, taskId, (t) => t.status === "failed", { timeoutMs: ANSWER_WITHIN_MS });
    assert.match(String(ended.statusMessage), /Upstream call lost/);
    if (answered.message.error) {
      assert.equal(errorOf(answered).code, -32602, `refused while the question was open: ${JSON.stringify(answered.message)}`);
    } else {
      // The end's time is taken as it is written (the same machine's clock): no later than the acknowledgement came.
      const endedAt = Date.parse(String(ended.lastUpdatedAt));
      assert.ok(endedAt <= answeredAt, `acknowledged ${endedAt - answeredAt} ms before the task's end was written`);
    }
  },
);

test(
  "an answer while its holder is frozen within its lease gets 503 holder_unresponsive, and the task goes on to use one answer",
  needsRedis,
  async () => {
    const { a, b, taskId } = await reportWaitingOnA(LONG_LEASE_MS, ["a2", "b2"]);
    const answers = recordUpstream<ElicitationAnsweredEvent>("elicitation-answered", "build_report");
    try {
      const charts = { charts: { action: "accept", content: { charts: true } } };
      const update = () =>
        rpcWithin(ANSWER_WITHIN_MS * 2, b.url, "tasks/update", { taskId, inputResponses: charts }, { capabilities: TASKS_AND_FORMS });
      const refused = await whileFrozen(a.child, update); // A says nothing for the link's 3 s; its lease (10 s) says it runs
      assert.equal(refused.status, 503, JSON.stringify(refused.message));
      assert.equal(errorOf(refused).data?.reason, "holder_unresponsive");
      assert.notEqual(
        resultOf(await rpcWithin(ANSWER_WITHIN_MS, b.url, "tasks/get", { taskId }, { capabilities: TASKS_AND_FORMS })).status,
        "failed",
      );
      // A may have found the answer on its link as it woke; sent again, it is delivered now or ignored (its key gone).
      assert.equal(resultOf(await update())?.resultType, "complete");
      const done = await pollTask(b.url, taskId, (t) => t.status === "completed", { timeoutMs: ANSWER_WITHIN_MS });
      assert.match(JSON.stringify(done.result), /charts included/);
      assert.equal(answers.seen.length, 1, "the upstream got one answer");
    } finally {
      answers.stop();
    }
  },
);

test(
  "an MRTR retry while the call's holder is frozen within its lease gets 503 round_not_taken; sent again, it resumes the one run",
  needsRedis,
  async () => {
    const config = { ...configOf(LONG_LEASE_MS), mrtr: { secret: randomBytes(32).toString("hex") } };
    const a = await cluster.processes.start(config, "a3");
    const b = await cluster.processes.start(config, "b3");
    const forms = { capabilities: { elicitation: {} } };
    const runs = recordUpstream<ToolStartedEvent>("tool-started", "ask_then_work");
    const answers = recordUpstream<ElicitationAnsweredEvent>("elicitation-answered", "ask_then_work");
    try {
      const call = { name: "ask_then_work", arguments: { ms: 0 } };
      const round = resultOf(await rpcWithin(ANSWER_WITHIN_MS, a.url, "tools/call", call, forms));
      assert.equal(round.resultType, "input_required", JSON.stringify(round));
      const retry = () =>
        rpcWithin(
          ANSWER_WITHIN_MS * 2,
          b.url,
          "tools/call",
          { ...call, requestState: round.requestState, inputResponses: { name: { action: "accept", content: { name: "Bo" } } } },
          forms,
        );
      const refused = await whileFrozen(a.child, retry); // A says nothing for the link's 3 s; its lease (10 s) says it runs
      // Past the inline JSON window the retry is answered as a stream, so the 503 is the stream's last frame's reason.
      assert.equal(errorOf(refused).data?.reason, "round_not_taken", JSON.stringify(refused.message));
      const done = await retry();
      assert.match(JSON.stringify(resultOf(done)?.content), /Hello, Bo!/, JSON.stringify(done.message));
      // A drops the retry nobody waits for once its wait for B's go (the link's 3 s) is over.
      const dropped = () => a.lines.find((line) => line.event === "holder.command.dropped");
      await eventually(async () => dropped() !== undefined, "A logged the retry it dropped as it woke", ANSWER_WITHIN_MS);
      assert.deepEqual([dropped()?.command, dropped()?.waitedMs], ["resume", 3_000]);
      assert.equal(answers.seen.length, 1, "the upstream got one answer");
      assert.equal(runs.seen.length, 1, "the tool ran once");
    } finally {
      runs.stop();
      answers.stop();
    }
  },
);
