// OpenQuestions, the one model of a call's open questions (inline MRTR and tasks alike): keys are
// minted once and never reused, a batch of answers is checked all-or-nothing, keys that are not
// open are ignored, and a question the upstream withdraws leaves the set by itself (onChange told
// unless its session ended, which ends its call too).

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OpenQuestions } from "../../src/questions/openQuestions.js";
import { SESSION_ENDED } from "../../src/questions/question.js";
import { formQuestion, ScriptedCall } from "../support/scriptedCall.js";

describe("OpenQuestions", () => {
  it("mints a fresh key per question, never reusing one after its answer was taken", () => {
    const call = new ScriptedCall();
    const questions = new OpenQuestions();
    call.watch({ question: (q) => questions.add(q) });
    call.ask(formQuestion("name"));
    const matched = questions.match({ name: { action: "accept", content: { name: "Ada" } } });
    assert.ok(matched.ok);
    questions.take(matched.answers);
    call.ask(formQuestion("name"));
    assert.deepEqual(Object.keys(questions.inputRequests()), ["name_2"]);
  });

  it("checks a batch all-or-nothing: one bad answer refuses it and leaves every question open", () => {
    const call = new ScriptedCall();
    const questions = new OpenQuestions();
    call.watch({ question: (q) => questions.add(q) });
    call.ask(formQuestion("first"));
    call.ask(formQuestion("second"));
    const matched = questions.match({ first: { action: "accept", content: { first: "ok" } }, second: { action: "maybe" } });
    assert.equal(matched.ok, false);
    if (!matched.ok) assert.equal(matched.key, "second");
    assert.deepEqual(Object.keys(questions.inputRequests()), ["first", "second"]);
  });

  it("ignores answers for keys that are not open, and delivers the ones that are", async () => {
    const call = new ScriptedCall();
    const questions = new OpenQuestions();
    call.watch({ question: (q) => questions.add(q) });
    const { answered } = call.ask(formQuestion("name"));
    const matched = questions.match({ stale: { ignored: true }, name: { action: "decline" } });
    assert.ok(matched.ok);
    assert.deepEqual(
      matched.answers.map((a) => a.key),
      ["name"],
    );
    questions.take(matched.answers);
    OpenQuestions.deliver(matched.answers);
    assert.deepEqual(await answered, { action: "decline" });
    assert.equal(questions.isEmpty, true);
  });

  it("a withdrawn question leaves the open set and onChange is told", () => {
    const call = new ScriptedCall();
    let changes = 0;
    const questions = new OpenQuestions(undefined, () => changes++);
    call.watch({ question: (q) => questions.add(q) });
    const asked = call.ask(formQuestion("name"));
    asked.withdraw();
    assert.equal(questions.isEmpty, true);
    assert.equal(changes, 1);
    assert.equal(questions.callEnding, false, "the upstream cancelled it: the call goes on");
  });

  it("a question withdrawn because its session ended leaves the set without telling onChange: its call's end says so", () => {
    const call = new ScriptedCall();
    let changes = 0;
    const questions = new OpenQuestions(undefined, () => changes++);
    call.watch({ question: (q) => questions.add(q) });
    call.ask(formQuestion("name")).withdraw(SESSION_ENDED);
    assert.equal(questions.isEmpty, true);
    assert.deepEqual(questions.inputRequests(), {});
    assert.equal(changes, 0);
    assert.equal(questions.callEnding, true, "its call is failing with the session");
  });

  it("a configured key wins over the schema-derived one", () => {
    const call = new ScriptedCall();
    const questions = new OpenQuestions("deploy");
    call.watch({ question: (q) => questions.add(q) });
    call.ask(formQuestion("confirm"));
    call.ask(formQuestion("confirm"));
    assert.deepEqual(Object.keys(questions.inputRequests()), ["deploy", "deploy_2"]);
  });
});
