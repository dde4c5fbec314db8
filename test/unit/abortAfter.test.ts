// abortAfter: a time limit that a garbage collection cannot take away, and the rule that src/ uses it
// wherever a time limit is combined with another signal (AbortSignal.any over AbortSignal.timeout
// loses its timeout to a collection: the DELETE ending a stalled upstream session waited forever).

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { abortAfter } from "../../src/util/abortAfter.js";
import { forceGc } from "../support/forceGc.js";
import { REPO } from "../support/repoRoot.js";

const aborted = (signal: AbortSignal, withinMs: number): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the signal did not abort within ${withinMs} ms`)), withinMs);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve(signal.reason);
    });
  });

test("a limit combined with another signal still ends after a garbage collection", async () => {
  const closing = new AbortController();
  const limit = abortAfter(50, () => new Error("no answer within 50 ms"), closing.signal);
  forceGc();
  const reason = await aborted(limit.signal, 2_000);
  assert.equal((reason as Error).message, "no answer within 50 ms");
});

test("the other signal ends it first with its own reason; clear() leaves it unaborted", async () => {
  const closing = new AbortController();
  const limit = abortAfter(60_000, () => new Error("too late"), closing.signal);
  closing.abort(new Error("taskgate is closing"));
  assert.equal((limit.signal.reason as Error).message, "taskgate is closing");
  limit.clear();

  const cleared = abortAfter(20, () => new Error("cleared"));
  cleared.clear();
  await assert.rejects(aborted(cleared.signal, 200), /did not abort/);
});

test("no file of src/ combines AbortSignal.timeout inside AbortSignal.any", () => {
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
    );
  const offenders = files(join(REPO, "src")).filter(
    (path) => /AbortSignal\.any\(\[[^\]]*AbortSignal\.timeout\(/s.test(readFileSync(path, "utf8").replace(/\/\/.*$/gm, "")), // code, not comments
  );
  assert.deepEqual(
    offenders.map((path) => relative(REPO, path)),
    [],
    "use abortAfter (src/util/abortAfter.ts)",
  );
});
