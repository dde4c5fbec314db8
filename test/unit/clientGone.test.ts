import assert from "node:assert/strict";
import { test } from "node:test";
import { ClientGone } from "../../src/util/clientGone.js";

test("ClientGone: listeners run once when the client leaves; a signal made before or after is aborted", async () => {
  const gone = new ClientGone();
  const heard: string[] = [];
  gone.onGone(() => heard.push("early"));
  const before = gone.signal;
  assert.equal(before.aborted, false);
  gone.leave();
  gone.leave(); // twice: heard once
  assert.deepEqual(heard, ["early"]);
  assert.equal(before.aborted, true);
  assert.equal(gone.signal, before, "one signal for the request");
  const late = new ClientGone();
  late.leave();
  assert.equal(late.signal.aborted, true, "a signal made after the client left is aborted at once");
  const afterwards = new Promise<void>((resolve) => late.onGone(resolve));
  await afterwards; // a listener registered after the client left still runs (in a microtask)
});
