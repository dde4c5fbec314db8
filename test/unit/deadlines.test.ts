import assert from "node:assert/strict";
import { EventEmitter, once } from "node:events";
import { describe, it } from "node:test";
import { Deadlines } from "../../src/util/deadlines.js";

/** Resolves when `count` deadlines fired, with the order they fired in. */
function recorder(count: number) {
  const fired: string[] = [];
  const events = new EventEmitter();
  return {
    fired,
    fire: (name: string) => () => {
      fired.push(name);
      if (fired.length === count) events.emit("all");
    },
    all: once(events, "all"),
  };
}

describe("Deadlines", () => {
  it("fires each deadline not cancelled, in the order set, no sooner than its length", async () => {
    const deadlines = new Deadlines(30);
    const seen = recorder(2);
    const started = performance.now();
    deadlines.start(seen.fire("a"));
    const cancelled = deadlines.start(seen.fire("b"));
    deadlines.start(seen.fire("c"));
    cancelled.cancel();
    await seen.all;
    assert.deepEqual(seen.fired, ["a", "c"]);
    assert.ok(performance.now() - started >= 29, "a deadline fired before its length had passed");
  });

  it("a deadline set while others fire waits its own full length, and later ones still fire", async () => {
    const deadlines = new Deadlines(25);
    const seen = recorder(3);
    let setAt = 0;
    deadlines.start(() => {
      seen.fire("first")();
      setAt = performance.now();
      deadlines.start(() => {
        assert.ok(performance.now() - setAt >= 24, "the deadline set inside a firing one fired early");
        seen.fire("nested")();
      });
    });
    // Set a little later than the first: fires after it, before the nested one.
    await new Promise((resolve) => setTimeout(resolve, 5));
    deadlines.start(seen.fire("second"));
    await seen.all;
    assert.deepEqual(seen.fired, ["first", "second", "nested"]);
  });

  it("survives thousands of deadlines met in time and still fires the one that is not", async () => {
    const deadlines = new Deadlines(20);
    for (let i = 0; i < 5_000; i++) deadlines.start(() => assert.fail("a cancelled deadline fired")).cancel();
    const seen = recorder(1);
    deadlines.start(seen.fire("late"));
    for (let i = 0; i < 5_000; i++) deadlines.start(() => assert.fail("a cancelled deadline fired")).cancel();
    await seen.all;
    assert.deepEqual(seen.fired, ["late"]);
  });

  it("a deadline whose callback throws does not stop the ones after it (the error still reaches the process)", async () => {
    const deadlines = new Deadlines(15);
    const seen = recorder(1);
    const thrown: unknown[] = [];
    // The callback's error is the process's, as a plain timer's would be: caught here so the test can go on.
    const catcher = (error: unknown) => thrown.push(error);
    const listeners = process.listeners("uncaughtException");
    process.removeAllListeners("uncaughtException");
    process.on("uncaughtException", catcher);
    try {
      deadlines.start(() => {
        throw new Error("a deadline's callback failed");
      });
      // Set later than the first: due only after the run in which the first threw.
      await new Promise((resolve) => setTimeout(resolve, 5));
      deadlines.start(seen.fire("after"));
      let limit: NodeJS.Timeout | undefined;
      const gaveUp = new Promise((_, reject) => {
        limit = setTimeout(() => reject(new Error("the deadline set after a throwing one did not fire within 2 s")), 2_000);
      });
      await Promise.race([seen.all, gaveUp]).finally(() => clearTimeout(limit));
    } finally {
      process.removeListener("uncaughtException", catcher);
      for (const listener of listeners) process.on("uncaughtException", listener);
    }
    assert.deepEqual(seen.fired, ["after"]);
    assert.equal((thrown[0] as Error | undefined)?.message, "a deadline's callback failed");
  });

  it("keeps the process alive while a deadline is pending, and not once none is", async () => {
    const deadlines = new Deadlines(60_000);
    const timer = () => (deadlines as unknown as { timer?: NodeJS.Timeout }).timer;
    const first = deadlines.start(() => undefined);
    assert.equal(timer()?.hasRef(), true);
    const second = deadlines.start(() => undefined);
    first.cancel();
    assert.equal(timer()?.hasRef(), true, "one deadline is still pending");
    second.cancel();
    second.cancel(); // twice: counted once
    assert.equal(timer()?.hasRef(), false);
    deadlines.start(() => undefined).cancel();
    assert.equal(timer()?.hasRef(), false);
  });

  it("holds a deadline met in time only while an older one is pending (a long limit met often keeps nothing)", () => {
    const deadlines = new Deadlines(60_000);
    for (let i = 0; i < 10_000; i++) deadlines.start(() => assert.fail("a cancelled deadline fired")).cancel();
    assert.equal(deadlines.held, 0, "deadlines met in time were kept");
    const oldest = deadlines.start(() => undefined);
    const met = Array.from({ length: 3_000 }, () => deadlines.start(() => assert.fail("a cancelled deadline fired")));
    const newest = deadlines.start(() => undefined);
    for (const deadline of met) deadline.cancel();
    assert.equal(deadlines.held, 3_002, "the met ones wait behind the oldest pending one");
    oldest.cancel();
    assert.equal(deadlines.held, 1, "once the oldest was met, only the newest pending one is held");
    newest.cancel();
    assert.equal(deadlines.held, 0);
  });
});
