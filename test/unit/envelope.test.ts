import assert from "node:assert/strict";
import { test } from "node:test";

import { classifyLegacy, type Envelope, parseEnvelope } from "../../src/http/envelope.js";
import { ErrorCode } from "../../src/protocol/errors.js";
import { META, type RequestId } from "../../src/protocol/wire.js";

type Headers = Record<string, string | string[] | undefined>;
type Params = Record<string, unknown>;

const VERSION = "2026-07-28";
const validMeta = (extra: Params = {}) => ({
  [META.protocolVersion]: VERSION,
  [META.clientCapabilities]: {},
  [META.clientInfo]: { name: "test-client", version: "1.0.0" },
  ...extra,
});

/** A conformant POST: body + the standard headers (Node-style lower-case names). */
function post(method: string, id: RequestId, params: Params = {}, headerOverrides: Headers = {}): Envelope {
  const body = JSON.stringify({ jsonrpc: "2.0", id, method, params: { _meta: validMeta(), ...params } });
  const headers: Headers = { "mcp-protocol-version": VERSION, "mcp-method": method, ...nameHeader(method, params), ...headerOverrides };
  return parseEnvelope({ headers, body });
}

function nameHeader(method: string, params: Params): Headers {
  const key =
    { "tools/call": "name", "prompts/get": "name", "resources/read": "uri" }[method] ?? (method.startsWith("tasks/") ? "taskId" : "");
  return typeof params[key] === "string" ? { "mcp-name": params[key] as string } : {};
}

function raw(body: string, headers: Headers = { "mcp-protocol-version": VERSION }): Envelope {
  return parseEnvelope({ headers, body });
}

function expectError(envelope: Envelope, code: number, status: number, id: RequestId | null, ...messageParts: string[]) {
  assert.equal(envelope.kind, "error", `expected an error, got ${JSON.stringify(envelope)}`);
  if (envelope.kind !== "error") return undefined as never;
  assert.equal(envelope.error.code, code, envelope.error.message);
  assert.equal(envelope.error.httpStatus, status, envelope.error.message);
  assert.equal(envelope.id, id, "request id must be echoed");
  for (const part of messageParts) {
    assert.ok(envelope.error.message.includes(part), `message "${envelope.error.message}" lacks "${part}"`);
  }
  return envelope.error;
}

function expectRequest(envelope: Envelope) {
  assert.equal(envelope.kind, "request", `expected a request, got ${JSON.stringify(envelope)}`);
  if (envelope.kind !== "request") return undefined as never;
  return envelope;
}

const expectMismatch = (envelope: Envelope, id: RequestId, ...parts: string[]) =>
  expectError(envelope, ErrorCode.HeaderMismatch, 400, id, ...parts);

// ---- accepted requests ----------------------------------------------------------------------------

test("valid tools/list becomes a request with capabilities and version", () => {
  const caps = { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } };
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: "list-1",
    method: "tools/list",
    params: { cursor: "c1", _meta: { ...validMeta(), [META.clientCapabilities]: caps } },
  });
  const env = expectRequest(raw(body, { "mcp-protocol-version": VERSION, "mcp-method": "tools/list" }));
  assert.equal(env.request.id, "list-1");
  assert.equal(env.request.method, "tools/list");
  assert.equal(env.request.jsonrpc, "2.0");
  assert.equal(env.request.params.cursor, "c1");
  assert.deepEqual(env.capabilities, caps);
  assert.equal(env.protocolVersion, VERSION);
});

test("tools/call with matching Mcp-Name is accepted", () => {
  const env = expectRequest(post("tools/call", 7, { name: "greet", arguments: { name: "World" } }));
  assert.equal(env.request.params.name, "greet");
});

test("clientInfo is optional (conformance: sep-2575-request-meta-client-info-optional)", () => {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 105,
    method: "server/discover",
    params: { _meta: { [META.protocolVersion]: VERSION, [META.clientCapabilities]: {} } },
  });
  expectRequest(raw(body, { "mcp-protocol-version": VERSION, "mcp-method": "server/discover" }));
});

test("a valid logLevel is accepted", () => {
  expectRequest(post("tools/list", 1, { _meta: validMeta({ [META.logLevel]: "debug" }) }));
});

// ---- 1. JSON and JSON-RPC shape -------------------------------------------------------------------

test("invalid JSON ⇒ -32700, HTTP 400, id null", () => {
  expectError(raw("{not json"), ErrorCode.ParseError, 400, null, "Parse error");
});

test("batch array ⇒ -32600 saying batching does not exist in 2026-07-28", () => {
  expectError(
    raw(JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "tools/list" }])),
    ErrorCode.InvalidRequest,
    400,
    null,
    "batching does not exist in 2026-07-28",
  );
});

test("non-object body ⇒ -32600", () => {
  expectError(raw('"hello"'), ErrorCode.InvalidRequest, 400, null);
});

test("id null ⇒ -32600, id null", () => {
  expectError(
    raw(JSON.stringify({ jsonrpc: "2.0", id: null, method: "tools/list", params: {} })),
    ErrorCode.InvalidRequest,
    400,
    null,
    "'id'",
  );
});

test("id of the wrong type ⇒ -32600", () => {
  expectError(raw(JSON.stringify({ jsonrpc: "2.0", id: { a: 1 }, method: "tools/list" })), ErrorCode.InvalidRequest, 400, null, "'id'");
});

test("jsonrpc other than 2.0 ⇒ -32600 echoing the id", () => {
  expectError(
    raw(JSON.stringify({ jsonrpc: "1.0", id: 9, method: "tools/list", params: { _meta: validMeta() } })),
    ErrorCode.InvalidRequest,
    400,
    9,
    "jsonrpc",
  );
});

test("missing jsonrpc ⇒ -32600 echoing the id", () => {
  expectError(raw(JSON.stringify({ id: "x", method: "tools/list" })), ErrorCode.InvalidRequest, 400, "x", "jsonrpc");
});

test("a POSTed response (result) ⇒ -32600 echoing the id", () => {
  expectError(raw(JSON.stringify({ jsonrpc: "2.0", id: 3, result: {} })), ErrorCode.InvalidRequest, 400, 3, "responses");
});

test("a POSTed response (error) ⇒ -32600 echoing the id", () => {
  expectError(
    raw(JSON.stringify({ jsonrpc: "2.0", id: 4, error: { code: 1, message: "x" } })),
    ErrorCode.InvalidRequest,
    400,
    4,
    "responses",
  );
});

test("missing method ⇒ -32600 echoing the id", () => {
  expectError(raw(JSON.stringify({ jsonrpc: "2.0", id: 5, params: {} })), ErrorCode.InvalidRequest, 400, 5, "'method'");
});

test("params that is not an object ⇒ -32600 echoing the id", () => {
  expectError(
    raw(JSON.stringify({ jsonrpc: "2.0", id: 6, method: "tools/list", params: [1] })),
    ErrorCode.InvalidRequest,
    400,
    6,
    "'params'",
  );
});

test("notifications/* without id ⇒ notification (no header checks)", () => {
  const env = raw(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), {});
  assert.deepEqual(env, { kind: "notification", method: "notifications/initialized" });
});

test("notification with params ⇒ notification", () => {
  const env = raw(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }));
  assert.deepEqual(env, { kind: "notification", method: "notifications/cancelled" });
});

test("a non-notification method without id ⇒ -32600, id null", () => {
  expectError(
    raw(JSON.stringify({ jsonrpc: "2.0", method: "tools/list", params: { _meta: validMeta() } })),
    ErrorCode.InvalidRequest,
    400,
    null,
    "'tools/list'",
    "'id'",
  );
});

// ---- 2. required _meta ----------------------------------------------------------------------------

const discover = (id: number, params: unknown, headers: Headers = { "mcp-protocol-version": VERSION, "mcp-method": "server/discover" }) =>
  raw(JSON.stringify({ jsonrpc: "2.0", id, method: "server/discover", params }), headers);

test("_meta absent with the header present ⇒ -32602 HTTP 400, not -32020 (conformance: missing-meta)", () => {
  expectError(discover(101, {}), ErrorCode.InvalidParams, 400, 101, "_meta", META.protocolVersion, META.clientCapabilities);
});

test("params absent entirely ⇒ -32602 HTTP 400", () => {
  expectError(raw(JSON.stringify({ jsonrpc: "2.0", id: 100, method: "server/discover" })), ErrorCode.InvalidParams, 400, 100, "_meta");
});

test("_meta absent wins over a mismatched Mcp-Method header", () => {
  expectError(discover(103, {}, { "mcp-protocol-version": VERSION, "mcp-method": "tools/list" }), ErrorCode.InvalidParams, 400, 103);
});

test("missing protocolVersion key ⇒ -32602 naming it (conformance: missing-protocol-version)", () => {
  const error = expectError(
    discover(102, { _meta: { [META.clientCapabilities]: {} } }),
    ErrorCode.InvalidParams,
    400,
    102,
    `'${META.protocolVersion}'`,
  );
  assert.ok(!error.message.includes(META.clientCapabilities));
});

test("missing clientCapabilities key ⇒ -32602 naming it (conformance: missing-client-capabilities)", () => {
  expectError(
    discover(104, { _meta: { [META.protocolVersion]: VERSION } }),
    ErrorCode.InvalidParams,
    400,
    104,
    `'${META.clientCapabilities}'`,
  );
});

test("both keys missing ⇒ -32602 naming both", () => {
  expectError(discover(106, { _meta: {} }), ErrorCode.InvalidParams, 400, 106, META.protocolVersion, META.clientCapabilities);
});

test("_meta that is not an object ⇒ -32602", () => {
  expectError(discover(107, { _meta: "x" }), ErrorCode.InvalidParams, 400, 107, "_meta");
});

test("protocolVersion that is not a string ⇒ -32602", () => {
  expectError(
    discover(108, { _meta: { [META.protocolVersion]: 2026, [META.clientCapabilities]: {} } }),
    ErrorCode.InvalidParams,
    400,
    108,
    META.protocolVersion,
  );
});

test("clientCapabilities that is not an object ⇒ -32602", () => {
  expectError(
    discover(109, { _meta: { [META.protocolVersion]: VERSION, [META.clientCapabilities]: [] } }),
    ErrorCode.InvalidParams,
    400,
    109,
    META.clientCapabilities,
  );
});

test("invalid logLevel ⇒ -32602", () => {
  expectError(
    post("tools/list", 110, { _meta: validMeta({ [META.logLevel]: "verbose" }) }),
    ErrorCode.InvalidParams,
    400,
    110,
    META.logLevel,
    "verbose",
  );
});

// ---- 3. standard headers --------------------------------------------------------------------------

test("missing MCP-Protocol-Version ⇒ -32020", () => {
  expectMismatch(
    post("tools/list", 11, {}, { "mcp-protocol-version": undefined }),
    11,
    "Missing required header MCP-Protocol-Version (expected '2026-07-28')",
  );
});

test("header 2026-07-28 with _meta v999.0.0 ⇒ -32020 not -32022 (conformance: header-mismatch-400)", () => {
  expectMismatch(
    post("server/discover", 302, { _meta: validMeta({ [META.protocolVersion]: "v999.0.0" }) }),
    302,
    "Header mismatch: MCP-Protocol-Version header value '2026-07-28' does not match body value 'v999.0.0'",
  );
});

test("Mcp-Method different from body ⇒ -32020 (conformance: tools/list with Mcp-Method prompts/list)", () => {
  expectMismatch(
    post("tools/list", 12, {}, { "mcp-method": "prompts/list" }),
    12,
    "Header mismatch: Mcp-Method header value 'prompts/list' does not match body value 'tools/list'",
  );
});

test("tools/call with Mcp-Method tasks/get ⇒ -32020 (conformance: tasks-headers-reject-mismatched-method)", () => {
  expectMismatch(post("tools/call", 13, { name: "greet" }, { "mcp-method": "tasks/get" }), 13, "Mcp-Method");
});

test("missing Mcp-Method ⇒ -32020 (conformance)", () => {
  expectMismatch(post("tools/list", 14, {}, { "mcp-method": undefined }), 14, "Missing required header Mcp-Method (expected 'tools/list')");
});

test("Mcp-Method value is case-sensitive: TOOLS/LIST ⇒ -32020 (conformance)", () => {
  expectMismatch(post("tools/list", 15, {}, { "mcp-method": "TOOLS/LIST" }), 15, "'TOOLS/LIST'");
});

test("header names are case-insensitive: mcp-method / MCP-METHOD accepted (conformance)", () => {
  expectRequest(post("tools/list", 16, {}, { "mcp-method": "tools/list" }));
  expectRequest(post("tools/list", 17, {}, { "mcp-method": undefined, "MCP-METHOD": "tools/list" }));
});

test("Mcp-Name different from params.name ⇒ -32020 (conformance: wrong_tool_name)", () => {
  expectMismatch(
    post("tools/call", 18, { name: "bar" }, { "mcp-name": "foo" }),
    18,
    "Header mismatch: Mcp-Name header value 'foo' does not match body value 'bar'",
  );
});

test("Mcp-Name '  greet  ' is accepted for greet (conformance: sep-2243-server-accepts-whitespace-header-value)", () => {
  expectRequest(post("tools/call", 19, { name: "greet" }, { "mcp-name": "  greet  " }));
});

test("missing Mcp-Name on tools/call ⇒ -32020 (conformance)", () => {
  expectMismatch(
    post("tools/call", 20, { name: "greet" }, { "mcp-name": undefined }),
    20,
    "Missing required header Mcp-Name (expected 'greet')",
  );
});

test("missing Mcp-Name on prompts/get ⇒ -32020", () => {
  expectMismatch(post("prompts/get", 21, { name: "p" }, { "mcp-name": undefined }), 21, "Missing required header Mcp-Name");
});

test("missing Mcp-Name on resources/read ⇒ -32020", () => {
  expectMismatch(
    post("resources/read", 22, { uri: "file:///a" }, { "mcp-name": undefined }),
    22,
    "Missing required header Mcp-Name (expected 'file:///a')",
  );
});

test("resources/read compares Mcp-Name with params.uri", () => {
  expectRequest(post("resources/read", 23, { uri: "file:///a" }));
  expectMismatch(post("resources/read", 24, { uri: "file:///a" }, { "mcp-name": "file:///b" }), 24, "'file:///b'", "'file:///a'");
});

test("base64 Mcp-Name is decoded before comparing (conformance: sep-2243-server-decode-base64)", () => {
  expectRequest(post("tools/call", 25, { name: "Hello" }, { "mcp-name": "=?base64?SGVsbG8=?=" }));
});

test("base64 Mcp-Name carrying non-ASCII matches the body", () => {
  const name = "héllo wörld";
  expectRequest(post("tools/call", 26, { name }, { "mcp-name": `=?base64?${Buffer.from(name).toString("base64")}?=` }));
});

test("bad padding =?base64?SGVsbG8?= ⇒ -32020 (conformance)", () => {
  expectMismatch(post("tools/call", 27, { name: "Hello" }, { "mcp-name": "=?base64?SGVsbG8?=" }), 27, "Mcp-Name", "padding");
});

test("bad alphabet =?base64?SGVs!!!bG8=?= ⇒ -32020 (conformance)", () => {
  expectMismatch(post("tools/call", 28, { name: "Hello" }, { "mcp-name": "=?base64?SGVs!!!bG8=?=" }), 28, "Mcp-Name", "alphabet");
});

test("literal without markers is compared as is (conformance: SGVsbG8= vs SGVsbG8=)", () => {
  expectRequest(post("tools/call", 29, { name: "SGVsbG8=" }, { "mcp-name": "SGVsbG8=" }));
});

test("prefix-only value is a literal (conformance: =?base64?SGVsbG8=)", () => {
  expectRequest(post("tools/call", 30, { name: "=?base64?SGVsbG8=" }, { "mcp-name": "=?base64?SGVsbG8=" }));
});

test("undecodable MCP-Protocol-Version ⇒ -32020", () => {
  expectMismatch(post("tools/list", 31, {}, { "mcp-protocol-version": "=?base64?MjAy?=" }), 31, "MCP-Protocol-Version");
});

test("base64 MCP-Protocol-Version and Mcp-Method are decoded too", () => {
  expectRequest(
    post(
      "tools/list",
      32,
      {},
      {
        "mcp-protocol-version": `=?base64?${Buffer.from(VERSION).toString("base64")}?=`,
        "mcp-method": `=?base64?${Buffer.from("tools/list").toString("base64")}?=`,
      },
    ),
  );
});

test("raw non-ASCII Mcp-Name ⇒ -32020", () => {
  expectMismatch(post("tools/call", 33, { name: "café" }, { "mcp-name": "café" }), 33, "non-ASCII");
});

test("repeated Mcp-Name header ⇒ -32020", () => {
  expectMismatch(post("tools/call", 34, { name: "greet" }, { "mcp-name": ["greet", "other"] }), 34, "Mcp-Name");
});

test("Mcp-Name present but params.name absent ⇒ -32020", () => {
  expectMismatch(post("tools/call", 35, {}, { "mcp-name": "greet" }), 35, "'greet'", "params.name is absent");
});

test("tasks/get|update|cancel without Mcp-Name are accepted (deliberate relaxation)", () => {
  expectRequest(post("tasks/get", 36, { taskId: "t1" }, { "mcp-name": undefined }));
  expectRequest(post("tasks/update", 37, { taskId: "t1", inputResponses: {} }, { "mcp-name": undefined }));
  expectRequest(post("tasks/cancel", 38, { taskId: "t1" }, { "mcp-name": undefined }));
});

test("tasks/get with matching Mcp-Name is accepted (conformance: routing-headers-accepted)", () => {
  expectRequest(post("tasks/get", 39, { taskId: "t1" }));
});

test("tasks/get with a different Mcp-Name ⇒ -32020 (conformance: rejects-mismatched-mcp-name-on-tasks-get)", () => {
  expectMismatch(
    post("tasks/get", 40, { taskId: "t1" }, { "mcp-name": "t2" }),
    40,
    "Header mismatch: Mcp-Name header value 't2' does not match body value 't1'",
  );
});

test("tasks/cancel with a different Mcp-Name ⇒ -32020", () => {
  expectMismatch(post("tasks/cancel", 41, { taskId: "t1" }, { "mcp-name": "t2" }), 41, "Mcp-Name");
});

test("integer params compare numerically", () => {
  expectRequest(post("tasks/get", 42, { taskId: 42 }, { "mcp-name": "42" }));
  expectMismatch(post("tasks/get", 43, { taskId: 42 }, { "mcp-name": "43" }), 43, "'43'", "'42'");
});

test("header values in error messages are truncated to ~100 chars", () => {
  const long = "x".repeat(5000);
  const error = expectMismatch(post("tools/call", 44, { name: "y".repeat(5000) }, { "mcp-name": long }), 44, "…");
  assert.ok(error.message.length < 300, `message is ${error.message.length} chars`);
});

test("Mcp-Name on a method without a name param is ignored", () => {
  expectRequest(post("tools/list", 45, {}, { "mcp-name": "anything" }));
});

// ---- 4. protocol version --------------------------------------------------------------------------

test("unsupported version (header and _meta v999.0.0) ⇒ -32022 HTTP 400 with data (conformance)", () => {
  const error = expectError(
    post("server/discover", 301, { _meta: validMeta({ [META.protocolVersion]: "v999.0.0" }) }, { "mcp-protocol-version": "v999.0.0" }),
    ErrorCode.UnsupportedProtocolVersion,
    400,
    301,
    "v999.0.0",
  );
  assert.deepEqual(error.data, { supported: ["2026-07-28"], requested: "v999.0.0" });
});

test("a legacy version with modern _meta ⇒ -32022 echoing it exactly", () => {
  const error = expectError(
    post("tools/list", "v-1", { _meta: validMeta({ [META.protocolVersion]: "2025-11-25" }) }, { "mcp-protocol-version": "2025-11-25" }),
    ErrorCode.UnsupportedProtocolVersion,
    400,
    "v-1",
  );
  assert.deepEqual(error.data, { supported: ["2026-07-28"], requested: "2025-11-25" });
});

test("version is checked before the method (unsupported version + unknown method ⇒ -32022)", () => {
  expectError(
    post("unknown/method", 303, { _meta: validMeta({ [META.protocolVersion]: "v1" }) }, { "mcp-protocol-version": "v1" }),
    ErrorCode.UnsupportedProtocolVersion,
    400,
    303,
  );
});

// ---- 5. method known ------------------------------------------------------------------------------

test("unknown method ⇒ -32601 HTTP 404 (conformance: unknown/method)", () => {
  expectError(post("unknown/method", 601), ErrorCode.MethodNotFound, 404, 601, "unknown/method");
});

test("initialize with modern _meta ⇒ -32601 HTTP 404 with a removal message (conformance)", () => {
  expectError(
    post("initialize", 500, { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "c", version: "1" } }),
    ErrorCode.MethodNotFound,
    404,
    500,
    "'initialize' was removed in 2026-07-28: send server/discover or call methods directly with _meta",
    "2026-07-28",
  );
});

for (const [method, hint] of [
  ["ping", "was removed in 2026-07-28"],
  ["logging/setLevel", META.logLevel],
  ["resources/subscribe", "subscriptions/listen"],
  ["resources/unsubscribe", "subscriptions/listen"],
  ["tasks/result", "tasks/get"],
  ["tasks/list", "'tasks/list' does not exist in the tasks extension"],
  ["sampling/createMessage", "input_required"],
] as const) {
  test(`removed method ${method} ⇒ -32601 HTTP 404 (conformance)`, () => {
    expectError(post(method, `id-${method}`, { taskId: "t1" }), ErrorCode.MethodNotFound, 404, `id-${method}`, `'${method}'`, hint);
  });
}

test("method names are case-sensitive (Tools/List ⇒ 404)", () => {
  expectError(post("Tools/List", 602), ErrorCode.MethodNotFound, 404, 602);
});

test("prototype-ish method names are just unknown", () => {
  expectError(post("constructor", 603), ErrorCode.MethodNotFound, 404, 603);
  expectError(post("__proto__", 604), ErrorCode.MethodNotFound, 404, 604);
});

// ---- classifyLegacy -------------------------------------------------------------------------------

const legacySessions = new Set(["legacy-1"]);
const classify = (method: string, headers: Headers, body?: unknown) =>
  classifyLegacy({ method, headers, body: () => body, isKnownLegacySession: (id) => legacySessions.has(id) });
const modernBody = (method: string) => ({ jsonrpc: "2.0", id: 1, method, params: { _meta: validMeta() } });
const legacyInit = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } },
};

test("classifyLegacy: known legacy Mcp-Session-Id ⇒ legacy, whatever the body", () => {
  assert.equal(classify("POST", { "mcp-session-id": "legacy-1", "mcp-protocol-version": VERSION }, modernBody("tools/list")), true);
});

test("classifyLegacy: a known legacy session decides without the body (it is never parsed)", () => {
  let asked = 0;
  const legacy = classifyLegacy({
    method: "POST",
    headers: { "mcp-session-id": "legacy-1" },
    body: () => {
      asked++;
      return legacyInit;
    },
    isKnownLegacySession: (id) => legacySessions.has(id),
  });
  assert.equal(legacy, true);
  assert.equal(asked, 0);
  assert.equal(classify("POST", {}, legacyInit), true, "without a session the body decides");
});

test("classifyLegacy: GET/DELETE with a known legacy session ⇒ legacy", () => {
  assert.equal(classify("GET", { "mcp-session-id": "legacy-1" }), true);
  assert.equal(classify("DELETE", { "mcp-session-id": "legacy-1" }), true);
});

test("classifyLegacy: GET/DELETE without any session id ⇒ not legacy (caller answers 405)", () => {
  assert.equal(classify("GET", {}), false);
  assert.equal(classify("DELETE", {}), false);
  assert.equal(classify("GET", { "mcp-session-id": " " }), false);
});

test("classifyLegacy: GET/DELETE with a session id taskgate never saw ⇒ legacy (the upstream answers 404)", () => {
  assert.equal(classify("GET", { "mcp-session-id": "unknown" }), true);
  assert.equal(classify("DELETE", { "mcp-session-id": "unknown" }), true);
});

test("classifyLegacy: legacy initialize (no modern _meta) ⇒ legacy", () => {
  assert.equal(classify("POST", {}, legacyInit), true);
  assert.equal(classify("POST", { "mcp-protocol-version": VERSION }, legacyInit), true);
});

test("classifyLegacy: initialize with modern _meta and 2026-07-28 header ⇒ not legacy (gets -32601)", () => {
  assert.equal(classify("POST", { "mcp-protocol-version": VERSION, "mcp-method": "initialize" }, modernBody("initialize")), false);
});

test("classifyLegacy: POST without MCP-Protocol-Version and without modern _meta ⇒ legacy", () => {
  assert.equal(classify("POST", {}, { jsonrpc: "2.0", id: 1, method: "tools/list" }), true);
  assert.equal(classify("POST", {}, [{ jsonrpc: "2.0", id: 1, method: "tools/list" }]), true, "legacy batch");
  assert.equal(classify("POST", {}, undefined), true, "unparsed body");
});

test("classifyLegacy: POST without the header but with modern _meta ⇒ not legacy (gets -32020)", () => {
  assert.equal(classify("POST", {}, modernBody("tools/list")), false);
  const capsOnly = { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: { [META.clientCapabilities]: {} } } };
  assert.equal(classify("POST", {}, capsOnly), false);
});

test("classifyLegacy: 2026-07-28 header without _meta ⇒ not legacy (gets -32602)", () => {
  assert.equal(
    classify("POST", { "mcp-protocol-version": VERSION }, { jsonrpc: "2.0", id: 101, method: "server/discover", params: {} }),
    false,
  );
});

test("classifyLegacy: legacy-version header, no modern _meta, expired session ⇒ legacy (so it gets 404 ⇒ re-init)", () => {
  const body = { jsonrpc: "2.0", id: 1, method: "tools/list" };
  assert.equal(classify("POST", { "mcp-protocol-version": "2025-06-18", "mcp-session-id": "expired" }, body), true);
});

test("classifyLegacy: unknown-version header with modern _meta ⇒ not legacy (gets -32022)", () => {
  const body = { jsonrpc: "2.0", id: 301, method: "server/discover", params: { _meta: validMeta({ [META.protocolVersion]: "v999.0.0" }) } };
  assert.equal(classify("POST", { "mcp-protocol-version": "v999.0.0" }, body), false);
});

test("classifyLegacy: other HTTP methods ⇒ not legacy", () => {
  assert.equal(classify("PUT", {}, legacyInit), false);
});
