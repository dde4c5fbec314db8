// Many calls at once from several users: every upstream question must reach the call (and the
// user) it belongs to, and every answer must get back to the right upstream call. A mix-up shows
// as a result carrying someone else's answer. Sessions are never shared between users; a call
// that can be asked holds its session alone while it runs.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { resultOf, rpc, TASKS_CAPS } from "../support/mcpClient.js";
import { health, type Stack, startStack } from "../support/stack.js";
import { pollTask } from "../support/tasks.js";

const TASKS = 60;
const INLINE = 40;

describe("concurrent calls sharing upstream sessions", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ speed: 20, config: { tasks: { tools: { build_report: "always", two_questions: "always" } } } });
  });
  after(() => stack.close());

  test(`${TASKS} tasks from 7 users, questions answered concurrently, each result carries its own answers`, async () => {
    const caps = { ...TASKS_CAPS, elicitation: {} };
    const outcomes = await Promise.all(
      Array.from({ length: TASKS }, async (_, i) => {
        const token = `user${i % 7}`;
        const report = i % 2 === 1;
        const created = resultOf(
          await rpc(
            stack.url,
            "tools/call",
            { name: report ? "build_report" : "two_questions", arguments: report ? { month: `m${i}` } : {} },
            { capabilities: caps, token },
          ),
        );
        const taskId = created.taskId as string;
        const wanted = report ? 1 : 2;
        await pollTask(
          stack.url,
          taskId,
          (t) => t.status === "input_required" && Object.keys(t.inputRequests as object).length === wanted,
          { token, timeoutMs: 30_000 },
        );
        const answers = report
          ? { charts: { action: "accept", content: { charts: i % 3 === 0 } } }
          : { colour: { action: "accept", content: { colour: `c${i}` } }, size: { action: "accept", content: { size: "M" } } };
        await rpc(stack.url, "tasks/update", { taskId, inputResponses: answers }, { capabilities: TASKS_CAPS, token });
        const done = await pollTask(stack.url, taskId, (t) => t.status === "completed" || t.status === "failed", {
          token,
          timeoutMs: 30_000,
        });
        const text = JSON.stringify(done.result);
        const right = report
          ? text.includes(`Report for m${i}:`) && text.includes(i % 3 === 0 ? "charts included" : "without charts")
          : text.includes(`colour=c${i},`);
        return right ? "ok" : `task ${i}: ${text}`;
      }),
    );
    assert.deepEqual(
      outcomes.filter((o) => o !== "ok"),
      [],
    );
    const sessions = (await health(stack.url)).upstreamSessions;
    // +1: the readiness check keeps a session of its own.
    assert.ok(sessions <= TASKS + 1, `at most one upstream session per concurrent asking call (${sessions} open for ${TASKS} calls)`);
  });

  test(`${INLINE} inline MRTR conversations of three rounds at once, each ending with its own names`, async () => {
    const caps = { elicitation: {} };
    const outcomes = await Promise.all(
      Array.from({ length: INLINE }, async (_, i) => {
        const token = `inline${i}`;
        /** The round's result; a JSON-RPC error instead says which call and round failed, and why. */
        const call = async (round: number, extra: Record<string, unknown>) => {
          const reply = await rpc(stack.url, "tools/call", { name: "two_rounds", arguments: {}, ...extra }, { capabilities: caps, token });
          const result = resultOf(reply);
          if (!result) throw new Error(`call ${i}, round ${round}: ${JSON.stringify(reply.message)}`);
          return result;
        };
        const first = await call(1, {});
        const second = await call(2, {
          requestState: first.requestState,
          inputResponses: { first: { action: "accept", content: { first: `F${i}` } } },
        });
        const done = await call(3, {
          requestState: second.requestState,
          inputResponses: { last: { action: "accept", content: { last: `L${i}` } } },
        });
        return JSON.stringify(done.content).includes(`Hello, F${i} L${i}!`) ? "ok" : `call ${i}: ${JSON.stringify(done)}`;
      }),
    );
    assert.deepEqual(
      outcomes.filter((o) => o !== "ok"),
      [],
    );
  });
});
