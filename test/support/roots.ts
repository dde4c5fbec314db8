// Answers a tool's roots/list questions round by round (inline MRTR) until it completes.
// server-everything may ask more than once for one call, even twice in one round: its own sync
// runs 350 ms after `notifications/initialized`, and get-roots-list asks again while it has no
// roots cached. Every question must be roots/list; at most `maxRounds` rounds.

import assert from "node:assert/strict";
import type { JsonObject } from "../../src/protocol/wire.js";
import { resultOf } from "./mcpClient.js";
import { callTool, expectComplete } from "./realServerCalls.js";

export async function answerRootsRounds(
  url: string,
  tool: string,
  args: JsonObject,
  who: { token: string; capabilities: JsonObject },
  roots: JsonObject[],
  maxRounds = 3,
): Promise<JsonObject> {
  let reply = await callTool(url, tool, args, who);
  for (let round = 1; resultOf(reply)?.resultType === "input_required"; round++) {
    assert.ok(round <= maxRounds, `${tool} still asks after ${maxRounds} roots rounds: ${JSON.stringify(reply.message)}`);
    const result = resultOf(reply);
    assert.equal("taskId" in result, false, "an inline question round carries no taskId");
    assert.equal(typeof result.requestState, "string", "input_required carries a requestState");
    const questions = Object.entries((result.inputRequests ?? {}) as Record<string, { method: string }>);
    assert.ok(questions.length > 0, `input_required without inputRequests: ${JSON.stringify(result)}`);
    for (const [key, question] of questions)
      assert.equal(question.method, "roots/list", `round ${round}, ${key}: expected roots/list, got ${JSON.stringify(question)}`);
    const inputResponses = Object.fromEntries(questions.map(([key]) => [key, { roots }]));
    reply = await callTool(url, tool, args, who, { params: { requestState: result.requestState, inputResponses } });
  }
  return expectComplete(reply);
}
