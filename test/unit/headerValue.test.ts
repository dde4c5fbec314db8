import assert from "node:assert/strict";
import { test } from "node:test";

import { clip, decodeHeaderValue, getHeader } from "../../src/protocol/headerValue.js";

const b64 = (text: string) => `=?base64?${Buffer.from(text, "utf8").toString("base64")}?=`;

function decodesTo(raw: string, expected: string) {
  assert.deepEqual(decodeHeaderValue(raw), { ok: true, value: expected });
}

function rejects(raw: string, reasonPart: RegExp) {
  const result = decodeHeaderValue(raw);
  assert.equal(result.ok, false, `expected ${JSON.stringify(raw)} to be rejected`);
  if (!result.ok) assert.match(result.reason, reasonPart);
}

test("plain visible-ASCII value is returned as is (case preserved)", () => {
  decodesTo("Tools/List", "Tools/List");
});

test("surrounding spaces are trimmed (conformance: Mcp-Name '  greet  ')", () => {
  decodesTo("  greet  ", "greet");
});

test("surrounding tabs are trimmed", () => {
  decodesTo("\tgreet \t", "greet");
});

test("inner spaces are kept", () => {
  decodesTo("a b", "a b");
});

test("empty value decodes to empty string", () => {
  decodesTo("", "");
});

test("base64 sentinel is decoded (conformance: =?base64?SGVsbG8=?=)", () => {
  decodesTo("=?base64?SGVsbG8=?=", "Hello");
});

test("base64 sentinel surrounded by whitespace is decoded", () => {
  decodesTo("  =?base64?SGVsbG8=?= ", "Hello");
});

test("base64 sentinel carries non-ASCII UTF-8", () => {
  decodesTo(b64("café ☕ 日本"), "café ☕ 日本");
});

test("decoded value keeps its own leading/trailing whitespace", () => {
  decodesTo(b64("  x  "), "  x  ");
});

test("empty base64 payload decodes to empty string", () => {
  decodesTo("=?base64??=", "");
});

test("bad padding is rejected (conformance: =?base64?SGVsbG8?=)", () => {
  rejects("=?base64?SGVsbG8?=", /padding/);
});

test("bad alphabet is rejected (conformance: =?base64?SGVs!!!bG8=?=)", () => {
  rejects("=?base64?SGVs!!!bG8=?=", /alphabet/);
});

test("base64url alphabet is rejected", () => {
  rejects("=?base64?-_-_?=", /alphabet/);
});

test("padding in the middle is rejected", () => {
  rejects("=?base64?SGVs=bG8?=", /base64/);
});

test("too much padding is rejected", () => {
  rejects("=?base64?SGVsbA===?=", /base64/);
});

test("non-canonical trailing bits are rejected", () => {
  rejects("=?base64?SGVsbG9=?=", /non-canonical/);
});

test("whitespace inside the payload is rejected", () => {
  rejects("=?base64?SGVs bG8=?=", /alphabet/);
});

test("payload that is not valid UTF-8 is rejected", () => {
  rejects("=?base64?//4=?=", /UTF-8/);
});

test("uppercase markers are a literal (markers are case-sensitive)", () => {
  decodesTo("=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?=");
});

test("only the prefix is a literal (conformance: =?base64?SGVsbG8=)", () => {
  decodesTo("=?base64?SGVsbG8=", "=?base64?SGVsbG8=");
});

test("only the suffix is a literal", () => {
  decodesTo("SGVsbG8=?=", "SGVsbG8=?=");
});

test("bare base64 without markers is a literal (conformance: SGVsbG8=)", () => {
  decodesTo("SGVsbG8=", "SGVsbG8=");
});

test("overlapping markers '=?base64?=' are a literal", () => {
  decodesTo("=?base64?=", "=?base64?=");
});

test("control character is rejected", () => {
  rejects("a\u0001b", /control/);
});

test("DEL is rejected", () => {
  rejects("a\u007fb", /control/);
});

test("inner tab is rejected", () => {
  rejects("a\tb", /control/);
});

test("raw non-ASCII is rejected (must be base64-encoded)", () => {
  rejects("café", /non-ASCII/);
});

test("getHeader is case-insensitive and unwraps single-element arrays", () => {
  assert.equal(getHeader({ "MCP-METHOD": "tools/list" }, "mcp-method"), "tools/list");
  assert.equal(getHeader({ "mcp-method": ["tools/list"] }, "Mcp-Method"), "tools/list");
  assert.deepEqual(getHeader({ "mcp-method": ["a", "b"] }, "Mcp-Method"), ["a", "b"]);
  assert.equal(getHeader({ "mcp-method": [] }, "Mcp-Method"), undefined);
  assert.equal(getHeader({}, "constructor"), undefined);
});

test("clip truncates to ~100 characters", () => {
  assert.equal(clip("abc"), "abc");
  const clipped = clip("x".repeat(500));
  assert.equal(clipped.length, 101);
  assert.ok(clipped.endsWith("…"));
});
