// A request's log (observability/requestLog.ts): its lines carry the request's bindings, and the
// pino child that binds them is made only when a line is actually written — once per request at
// most, never for a request that logs nothing or only below the level (issue 14's profile).

import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "../../src/observability/logger.js";
import { requestLog } from "../../src/observability/requestLog.js";
import { LogCapture } from "../support/logCapture.js";

/** A real pino logger whose child() calls are counted (the real child is returned). */
function countingLogger(level: string) {
  const logs = new LogCapture();
  const parent = createLogger(level, logs);
  const realChild = parent.child.bind(parent);
  let children = 0;
  parent.child = ((...args: Parameters<typeof realChild>) => {
    children += 1;
    return realChild(...args);
  }) as typeof parent.child;
  return { parent, logs, children: () => children };
}

test("lines carry the bindings; the child is made once, at the first line written", () => {
  const { parent, logs, children } = countingLogger("info");
  const log = requestLog(parent, { requestId: "req-1", rpcMethod: "tools/call" });
  assert.equal(children(), 0, "nothing made before anything is logged");
  log.info({ event: "first" }, "one");
  log.warn({ event: "second" }, "two");
  log.error({ event: "third" }, "three");
  assert.equal(children(), 1);
  assert.deepEqual(
    logs.lines.map((line) => [line.event, line.requestId, line.rpcMethod]),
    [
      ["first", "req-1", "tools/call"],
      ["second", "req-1", "tools/call"],
      ["third", "req-1", "tools/call"],
    ],
  );
});

test("below the level nothing is written and no child is made", () => {
  const { parent, logs, children } = countingLogger("warn");
  const log = requestLog(parent, { requestId: "req-2" });
  log.debug({ event: "noise" }, "debug");
  log.info({ event: "noise" }, "info");
  assert.equal(children(), 0);
  assert.equal(logs.lines.length, 0);
  log.warn({ event: "kept" }, "warn");
  assert.equal(children(), 1);
  assert.deepEqual(
    logs.lines.map((line) => [line.event, line.requestId]),
    [["kept", "req-2"]],
  );
});
