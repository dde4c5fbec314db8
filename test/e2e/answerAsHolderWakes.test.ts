// A holder that wakes without its upstream session: taskgate A (a real child process on Redis)
// holds a build_report task waiting for its question, and is frozen (SIGSTOP) past its lease, so B
// closes A's upstream session as one a dead instance left. A wakes, and at once a call of the same
// user on A finds the session gone (the upstream answers 404) and A drops it, failing the task's
// call with it, while an invalid answer to the question comes through B. Until the call's failure
// is recorded (its error is named after a probe of the backend) the record still shows the question:
// the answer must be refused, or acknowledged only once the task's end is written, never while the
// task still reads input_required. Found by the chaos run.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { rpcWithin } from "../support/boundedRpc.js";
import { type ChildCluster, startChildCluster } from "../support/childCluster.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { ANSWER_WITHIN_MS } from "../support/limits.js";
import { errorOf, resultOf, TASKS_CAPS } from "../support/mcpClient.js";
import { needsRedis } from "../support/redisServer.js";
import { pollTask } from "../support/tasks.js";
import { nextEvent } from "../support/waiting.js";

failIfStillRunning();

const LEASE_MS = 1_000;
/** The client can be asked a form question (build_report asks whether to include charts). */
const CAPS = { ...TASKS_CAPS, elicitation: { form: {} } };
let cluster: ChildCluster;

before(async () => {
  cluster = await startChildCluster({ speed: 20 });
});
after(() => cluster?.close());

test(
  "an answer sent as a holder wakes without its upstream session is refused, or acknowledged only after the task's end is written",
  needsRedis,
  async () => {
    const { legacy, processes } = cluster;
    const config = { ...cluster.config(LEASE_MS), tasks: { tools: { build_report: "always" } } };
    const a = await processes.start(config, "a");
    const b = await processes.start(config, "b");
    const created = await rpcWithin(
      ANSWER_WITHIN_MS,
      a.url,
      "tools/call",
      { name: "build_report", arguments: { month: "x" } },
      { capabilities: CAPS },
    );
    const taskId = resultOf(created).taskId as string;
    const asking = await pollTask(a.url, taskId, (t) => t.status === "input_required", { timeoutMs: ANSWER_WITHIN_MS });
    assert.deepEqual(Object.keys(asking.inputRequests as object), ["charts"]);

    const sessionClosed = nextEvent(legacy.events, "session-closed", () => true, LEASE_MS * 10);
    a.child.kill("SIGSTOP");
    try {
      await sessionClosed; // B took A for dead and closed its upstream sessions
    } finally {
      a.child.kill("SIGCONT");
    }
    const greet = rpcWithin(ANSWER_WITHIN_MS, a.url, "tools/call", { name: "greet", arguments: { name: "z" } }, { capabilities: CAPS });
    const invalid = { charts: { action: "accept", content: { charts: "yes" } } };
    const answered = await rpcWithin(ANSWER_WITHIN_MS, b.url, "tasks/update", { taskId, inputResponses: invalid }, { capabilities: CAPS });
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
