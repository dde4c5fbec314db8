// E2E: 300 concurrent subscriptions/listen streams (each its own HTTP connection) on one task all
// receive every status change, in order, up to the task's completion; closing them releases every
// listener. two_rounds asks twice, so the streams open while the task waits on its first question
// (no race with the clock) and then see working → input_required → working → completed.
// Run: node --import tsx --test test/e2e/subscriptionsMany.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type JsonObject, TASKS_EXTENSION } from "../../src/protocol/wire.js";
import { type Listen, openListen, paramsOf, statusTrail, subscriptionIdOf } from "../support/listen.js";
import { resultOf, rpc, TASKS_CAPS } from "../support/mcpClient.js";
import { scrape, waitForMetric } from "../support/metrics.js";
import { type Stack, startStack } from "../support/stack.js";
import { pollTask } from "../support/tasks.js";

const LISTENERS = 300;

describe("subscriptions/listen with many listeners", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ speed: 20, config: { tasks: { tools: { two_rounds: "always" } } } });
  });
  after(async () => {
    await stack.close();
  });

  test(`${LISTENERS} listeners on one task all see working → input_required → working → completed`, async () => {
    const started = Date.now();
    const call = await rpc(
      stack.url,
      "tools/call",
      { name: "two_rounds", arguments: {} },
      { capabilities: { extensions: { [TASKS_EXTENSION]: {} }, elicitation: {} } },
    );
    const taskId = resultOf(call).taskId as string;
    assert.ok(taskId, JSON.stringify(call.message));
    const isStatus = (status: string) => (frame: JsonObject) => frame.method === "notifications/tasks" && paramsOf(frame).status === status;
    const answer = async (frame: JsonObject, content: JsonObject) => {
      const [key] = Object.keys(paramsOf(frame).inputRequests as JsonObject);
      const update = await rpc(
        stack.url,
        "tasks/update",
        { taskId, inputResponses: { [key!]: { action: "accept", content } } },
        { capabilities: TASKS_CAPS },
      );
      assert.equal(resultOf(update)?.resultType, "complete", JSON.stringify(update.message));
    };

    await pollTask(stack.url, taskId, (task) => task.status === "input_required"); // the first question is out

    const streams: Listen[] = await Promise.all(
      Array.from({ length: LISTENERS }, (_, i) =>
        openListen(stack.url, { taskIds: [taskId] }, { id: `many-${i}`, capabilities: TASKS_CAPS }),
      ),
    );
    try {
      const open = await scrape(stack.url);
      assert.equal(open.value("taskgate_listen_streams"), LISTENERS);
      assert.equal(open.value("taskgate_listen_follows", { kind: "task" }), LISTENERS);

      // Every stream starts from the first question (its current state, right after the ack).
      const first = await Promise.all(streams.map((s) => s.waitFor(isStatus("input_required"), 10_000, "first question")));
      await answer(first[0]!, { first: "Ada" });
      const second = await Promise.all(
        streams.map((s, i) => s.waitFor((f) => isStatus("input_required")(f) && f !== first[i], 10_000, "second question")),
      );
      assert.match(JSON.stringify(paramsOf(second[0]!).inputRequests), /Last name\?/);
      await answer(second[0]!, { last: "Lovelace" });
      await Promise.all(streams.map((s) => s.waitFor(isStatus("completed"), 10_000, "completed")));

      streams.forEach((stream, i) => {
        assert.equal(stream.frames[0]!.method, "notifications/subscriptions/acknowledged");
        assert.deepEqual(
          statusTrail(stream.frames, taskId),
          ["input_required", "working", "input_required", "working", "completed"],
          `stream ${i}`,
        );
        for (const frame of stream.frames) assert.equal(subscriptionIdOf(frame), `many-${i}`);
      });
      assert.match(JSON.stringify(paramsOf(streams[0]!.frames.at(-1)!).result), /Hello, Ada Lovelace!/);
      assert.equal((await scrape(stack.url)).value("taskgate_listen_follows", { kind: "task" }), 0, "finished task still followed");
    } finally {
      for (const stream of streams) stream.close();
    }
    await waitForMetric(stack.url, "taskgate_listen_streams", {}, 0); // all streams released
    assert.ok(Date.now() - started < 20_000, `took ${Date.now() - started} ms`);
  });
});
