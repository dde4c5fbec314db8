// modernResult: a legacy upstream's result as a 2026-07-28 one — every field kept in order,
// resultType added, the 2025-11-25 related-task marker dropped from _meta (and _meta with it when
// nothing else is left), and a "__proto__" key the upstream's JSON carried kept as data.
// Run: node --import tsx --test test/unit/upstreamResult.test.ts

import assert from "node:assert/strict";
import { test } from "node:test";
import type { JsonObject } from "../../src/protocol/wire.js";
import { modernResult } from "../../src/upstream/upstreamResult.js";

const RELATED = "io.modelcontextprotocol/related-task";

test("fields kept in order, then resultType; the related-task marker dropped, other _meta kept", () => {
  const result = modernResult({
    content: [{ type: "text", text: "hi" }],
    isError: false,
    _meta: { [RELATED]: { taskId: "t" }, trace: "x" },
  });
  assert.deepEqual(Object.keys(result), ["content", "isError", "resultType", "_meta"]);
  assert.deepEqual(result, { content: [{ type: "text", text: "hi" }], isError: false, resultType: "complete", _meta: { trace: "x" } });
});

test("_meta holding only the marker is dropped; extra fields come before resultType", () => {
  const result = modernResult({ tools: [], _meta: { [RELATED]: { taskId: "t" } } }, { ttlMs: 0 });
  assert.deepEqual(result, { tools: [], ttlMs: 0, resultType: "complete" });
  assert.equal("_meta" in result, false);
});

test("the input is not changed", () => {
  const input: JsonObject = { content: [], _meta: { [RELATED]: { taskId: "t" } } };
  modernResult(input);
  assert.deepEqual(input, { content: [], _meta: { [RELATED]: { taskId: "t" } } });
});

test("a __proto__ key from the upstream's JSON stays a data field and never becomes the prototype", () => {
  const parsed = JSON.parse('{"content":[],"__proto__":{"polluted":true},"_meta":{"__proto__":{"also":1}}}') as JsonObject;
  const result = modernResult(parsed);
  assert.equal(Object.getPrototypeOf(result), Object.prototype);
  assert.equal((result as { polluted?: unknown }).polluted, undefined);
  assert.equal(
    JSON.stringify(result),
    '{"content":[],"__proto__":{"polluted":true},"resultType":"complete","_meta":{"__proto__":{"also":1}}}',
  );
});
