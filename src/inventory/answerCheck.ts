// Before answers go to the task's holder: the task must be waiting (409 otherwise), every key must
// name one of its open questions (409), and every answer must fit its question — the same check
// tasks/update makes (questions/inputResponseCheck.ts); a misfit is a 422 whose `field` names the
// form's property ("deploy"; else `action`, `content`, or the key itself) and `key` the question.
// Nothing is delivered when one is refused.

import { inventoryError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/wire.js";
import { answerProblem } from "../questions/inputResponseCheck.js";
import type { TaskRecord } from "../tasks/taskRecord.js";

export function checkAnswers(record: TaskRecord, responses: JsonObject): void {
  if (record.status !== "input_required") {
    throw inventoryError("wrong_state", `the task is ${record.status}, not input_required: there is no question to answer`);
  }
  const open = record.inputRequests ?? {};
  for (const [key, answer] of Object.entries(responses)) {
    const question = Object.hasOwn(open, key) ? open[key] : undefined;
    if (!question) {
      throw inventoryError("unknown_input_key", `'${key}' is not an open question of this task (open: ${Object.keys(open).join(", ")})`);
    }
    const problem = answerProblem(question, answer);
    if (problem) {
      const field = problem.field ?? key;
      throw inventoryError("invalid_answer", `${problem.message} (the question stays open; send a corrected answer)`, { field, key });
    }
  }
}
