// Which id a request gets (http/requestId.ts): a sane X-Request-Id as sent, else a valid W3C
// traceparent's trace id, else a fresh UUID; a hostile X-Request-Id is replaced and says why.
// Headers are given as IncomingMessage.headersDistinct gives them (every value of each header).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MAX_REQUEST_ID_LENGTH, requestIdOf } from "../../src/http/requestId.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

describe("X-Request-Id", () => {
  test("a sane one is used as sent", () => {
    assert.deepEqual(requestIdOf({ "x-request-id": ["req-42"] }), { id: "req-42", from: "x-request-id" });
    const longest = "a".repeat(MAX_REQUEST_ID_LENGTH);
    assert.equal(requestIdOf({ "x-request-id": [longest] }).id, longest);
    const punctuated = "Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8";
    assert.equal(requestIdOf({ "x-request-id": [punctuated] }).id, punctuated);
  });

  const hostile: Array<[string, string[], RegExp]> = [
    ["too long", ["a".repeat(MAX_REQUEST_ID_LENGTH + 1)], /longer than 128 characters \(129\)/],
    ["a megabyte", ["x".repeat(1 << 20)], /longer than 128/],
    ["a tab", ["abc\tdef"], /not visible ASCII/],
    ["a space", ["abc def"], /not visible ASCII/],
    ["a line break", ["abc\ndef"], /not visible ASCII/],
    ["non-ASCII", ["r\u00e9q"], /not visible ASCII/],
    ["empty", [""], /empty/],
    ["sent twice", ["one", "two"], /more than once/],
  ];
  for (const [what, values, why] of hostile) {
    test(`${what}: replaced by a fresh UUID, saying why`, () => {
      const chosen = requestIdOf({ "x-request-id": values });
      assert.match(chosen.id, UUID);
      assert.equal(chosen.from, "minted");
      assert.match(chosen.refused ?? "", why);
      assert.ok(!values.some((value) => (chosen.refused ?? "").includes(value) && value.length > 0), "the refused value is not repeated");
    });
  }

  test("it wins over a traceparent; a refused one gives way to the traceparent", () => {
    assert.equal(requestIdOf({ "x-request-id": ["mine"], traceparent: [TRACEPARENT] }).id, "mine");
    const replaced = requestIdOf({ "x-request-id": ["a b"], traceparent: [TRACEPARENT] });
    assert.deepEqual(replaced, {
      id: TRACE_ID,
      from: "traceparent",
      refused: "not visible ASCII (control characters, spaces or non-ASCII)",
    });
  });
});

describe("traceparent", () => {
  test("a valid one gives its trace id", () => {
    assert.deepEqual(requestIdOf({ traceparent: [TRACEPARENT] }), { id: TRACE_ID, from: "traceparent" });
    // A later version is read as version 00 (W3C Trace Context §4.3), fields after the fourth ignored.
    assert.equal(requestIdOf({ traceparent: [`cc-${TRACE_ID}-00f067aa0ba902b7-01-what-comes-later`] }).id, TRACE_ID);
  });

  const invalid: Array<[string, string[]]> = [
    ["all-zero trace id", [`00-${"0".repeat(32)}-00f067aa0ba902b7-01`]],
    ["all-zero parent id", [`00-${TRACE_ID}-${"0".repeat(16)}-01`]],
    ["version ff", [`ff-${TRACE_ID}-00f067aa0ba902b7-01`]],
    ["version 00 with more fields", [`${TRACEPARENT}-extra`]],
    ["upper-case hex", [`00-${TRACE_ID.toUpperCase()}-00f067aa0ba902b7-01`]],
    ["a short trace id", [`00-${TRACE_ID.slice(1)}-00f067aa0ba902b7-01`]],
    ["sent twice", [TRACEPARENT, TRACEPARENT]],
    ["not one at all", ["hello"]],
  ];
  for (const [what, values] of invalid) {
    test(`${what}: ignored, a UUID is minted`, () => {
      const chosen = requestIdOf({ traceparent: values });
      assert.match(chosen.id, UUID);
      assert.equal(chosen.from, "minted");
      assert.equal(chosen.refused, undefined);
    });
  }
});

test("without either, every request gets its own UUID", () => {
  const a = requestIdOf({});
  const b = requestIdOf({});
  assert.match(a.id, UUID);
  assert.notEqual(a.id, b.id);
});
