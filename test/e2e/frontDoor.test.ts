// E2E: the front door's rejections and acceptances, over real HTTP through a running taskgate in
// front of the real example legacy server. One test per bad input: JSON-RPC code, HTTP status, a
// message a person can act on, and the request id echoed whenever it was readable. The stack runs
// with token auth, a small body limit and an in-memory log, so the last test can check that no log
// line ever carried a bearer token. Run: node --import tsx --test test/e2e/frontDoor.test.ts

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { request as httpRequest, type OutgoingHttpHeaders } from "node:http";
import { Writable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { createLogger } from "../../src/observability/logger.js";
import { ErrorCode } from "../../src/protocol/errors.js";
import { type JsonObject, META, PROTOCOL_VERSION, TASKS_EXTENSION } from "../../src/protocol/wire.js";
import { errorOf, modernBody, modernHeaders, type RpcOptions, resultOf, rpc, TASKS_CAPS } from "../support/mcpClient.js";
import { type Stack, startStack } from "../support/stack.js";
import { eventually } from "../support/waiting.js";

const TOKEN = "e2e-Secret-Token-4f9a1c27b3";
const WRONG_TOKEN = "e2e-Wrong-Token-90d1ee5a";
const BODY_LIMIT = 2048;

/** Every log line the gateway wrote, as text. */
const logLines: string[] = [];
const logSink = new Writable({
  write(chunk: Buffer, _encoding, callback) {
    logLines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    callback();
  },
});

let stack: Stack;
before(async () => {
  stack = await startStack({
    speed: 50,
    log: createLogger("trace", logSink),
    config: {
      bodyLimitBytes: BODY_LIMIT,
      auth: { mode: "tokens", tokens: [{ sha256: createHash("sha256").update(TOKEN).digest("hex"), subject: "alice" }] },
    },
  });
});
after(async () => {
  await stack.close();
});

// ---- helpers -------------------------------------------------------------------------------------

interface Raw {
  status: number;
  headers: Headers;
  text: string;
  json: JsonObject;
}

/** The standard headers of a modern request plus our token; `undefined` removes a header. */
function headersFor(method: string, params: JsonObject, overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const headers: Record<string, string> = modernHeaders(method, params, TOKEN);
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete headers[k];
    else headers[k] = v;
  }
  return headers;
}

/** POSTs raw bytes with the given headers (fetch). */
async function post(body: string, headers: Record<string, string>): Promise<Raw> {
  const response = await fetch(stack.url, { method: "POST", headers, body });
  const text = await response.text();
  let json: JsonObject = {};
  try {
    json = text ? (JSON.parse(text) as JsonObject) : {};
  } catch {
    // left empty; the test asserts on text
  }
  return { status: response.status, headers: response.headers, text, json };
}

const call = (method: string, params: JsonObject = {}, options: RpcOptions = {}) =>
  rpc(stack.url, method, params, { token: TOKEN, ...options });

/** A request with node:http, which lets us set Host and keep header values as we wrote them. */
function nodeRequest(
  method: string,
  headers: OutgoingHttpHeaders,
  body?: string,
): Promise<{ status: number; headers: Record<string, unknown>; json: JsonObject }> {
  const url = new URL(stack.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname, method, headers, setHost: !("host" in headers || "Host" in headers) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json: text ? (JSON.parse(text) as JsonObject) : {} });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

interface Expected {
  status: number;
  code: number;
  /** The request id, or null when it could not be read. */
  id: string | number | null;
  message: RegExp;
}

function assertRejected(
  reply: { status: number; json?: JsonObject; message?: JsonObject; headers: Headers | Record<string, unknown> },
  expected: Expected,
) {
  const body = reply.json ?? reply.message ?? {};
  assert.equal(reply.status, expected.status, `HTTP status; body: ${JSON.stringify(body)}`);
  const contentType = reply.headers instanceof Headers ? reply.headers.get("content-type") : reply.headers["content-type"];
  assert.match(String(contentType), /^application\/json/, "errors are application/json");
  assert.equal(body.jsonrpc, "2.0");
  assert.equal(body.id, expected.id, "request id echoed when readable");
  assert.equal("result" in body, false);
  const error = body.error as { code: number; message: string };
  assert.equal(error.code, expected.code, `JSON-RPC code; message: ${error.message}`);
  assert.match(error.message, expected.message);
}

const toolsListBody = (id: string | number) => JSON.stringify(modernBody("tools/list", {}, { id }));

// ---- JSON and JSON-RPC shape ------------------------------------------------------------------

describe("front door: body shape", () => {
  test("a body that is not JSON gets -32700 / 400 with id null", async () => {
    const reply = await post('{"jsonrpc":"2.0","id":1,"method":', headersFor("tools/list", {}));
    assertRejected(reply, { status: 400, code: ErrorCode.ParseError, id: null, message: /not valid JSON/ });
  });

  test("a JSON body that is not JSON-RPC 2.0 gets -32600 / 400 with its id echoed", async () => {
    const body = {
      jsonrpc: "1.0",
      id: "shape-1",
      method: "tools/list",
      params: { _meta: (modernBody("tools/list", {}).params as JsonObject)._meta },
    };
    const reply = await post(JSON.stringify(body), headersFor("tools/list", {}));
    assertRejected(reply, { status: 400, code: ErrorCode.InvalidRequest, id: "shape-1", message: /'jsonrpc' must be "2\.0"/ });
  });

  test("a JSON value that is not an object gets -32600 / 400", async () => {
    const reply = await post('"tools/list"', headersFor("tools/list", {}));
    assertRejected(reply, { status: 400, code: ErrorCode.InvalidRequest, id: null, message: /must be a JSON-RPC request object/ });
  });

  test("a batch array gets -32600 / 400 saying batching does not exist", async () => {
    const batch = JSON.stringify([modernBody("tools/list", {}, { id: 1 }), modernBody("prompts/list", {}, { id: 2 })]);
    const reply = await post(batch, headersFor("tools/list", {}));
    assertRejected(reply, {
      status: 400,
      code: ErrorCode.InvalidRequest,
      id: null,
      message: /batching does not exist.*exactly one request/,
    });
  });

  test("a request without params._meta gets -32602 / 400 naming the required keys", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: "no-meta", method: "server/discover", params: {} });
    const reply = await post(body, headersFor("server/discover", {}));
    assertRejected(reply, {
      status: 400,
      code: ErrorCode.InvalidParams,
      id: "no-meta",
      message: new RegExp(`_meta.*${META.protocolVersion}`),
    });
  });

  test("a request whose _meta lacks clientCapabilities gets -32602 / 400 naming that key", async () => {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 77,
      method: "tools/list",
      params: { _meta: { [META.protocolVersion]: PROTOCOL_VERSION } },
    });
    const reply = await post(body, headersFor("tools/list", {}));
    assertRejected(reply, { status: 400, code: ErrorCode.InvalidParams, id: 77, message: new RegExp(META.clientCapabilities) });
  });
});

// ---- standard headers and version ---------------------------------------------------------------

describe("front door: headers and protocol version", () => {
  test("modern _meta without the MCP-Protocol-Version header gets -32020 / 400 naming the header", async () => {
    const reply = await post(toolsListBody("no-version"), headersFor("tools/list", {}, { "MCP-Protocol-Version": undefined }));
    assertRejected(reply, {
      status: 400,
      code: ErrorCode.HeaderMismatch,
      id: "no-version",
      message: /Missing required header MCP-Protocol-Version/,
    });
  });

  test("a missing Mcp-Method header gets -32020 / 400", async () => {
    const reply = await post(toolsListBody("no-method"), headersFor("tools/list", {}, { "Mcp-Method": undefined }));
    assertRejected(reply, {
      status: 400,
      code: ErrorCode.HeaderMismatch,
      id: "no-method",
      message: /Missing required header Mcp-Method.*tools\/list/,
    });
  });

  test("an Mcp-Method that differs from the body gets -32020 / 400 quoting both values", async () => {
    const reply = await post(toolsListBody("bad-method"), headersFor("tools/list", {}, { "Mcp-Method": "prompts/list" }));
    assertRejected(reply, {
      status: 400,
      code: ErrorCode.HeaderMismatch,
      id: "bad-method",
      message: /Mcp-Method header value 'prompts\/list' does not match body value 'tools\/list'/,
    });
  });

  test("Mcp-Method values are case-sensitive", async () => {
    const reply = await post(toolsListBody("case"), headersFor("tools/list", {}, { "Mcp-Method": "TOOLS/LIST" }));
    assertRejected(reply, { status: 400, code: ErrorCode.HeaderMismatch, id: "case", message: /'TOOLS\/LIST'/ });
  });

  test("an Mcp-Name that differs from params.name gets -32020 / 400 quoting both values", async () => {
    const params = { name: "greet", arguments: { name: "x" } };
    const body = JSON.stringify(modernBody("tools/call", params, { id: "bad-name" }));
    const reply = await post(body, headersFor("tools/call", params, { "Mcp-Name": "fail_tool" }));
    assertRejected(reply, {
      status: 400,
      code: ErrorCode.HeaderMismatch,
      id: "bad-name",
      message: /Mcp-Name header value 'fail_tool' does not match body value 'greet'/,
    });
  });

  test("a missing Mcp-Name on tools/call gets -32020 / 400", async () => {
    const params = { name: "greet", arguments: { name: "x" } };
    const body = JSON.stringify(modernBody("tools/call", params, { id: "no-name" }));
    const reply = await post(body, headersFor("tools/call", params, { "Mcp-Name": undefined }));
    assertRejected(reply, {
      status: 400,
      code: ErrorCode.HeaderMismatch,
      id: "no-name",
      message: /Missing required header Mcp-Name.*'greet'/,
    });
  });

  test("a badly padded base64 Mcp-Name gets -32020 / 400 explaining the encoding problem", async () => {
    const params = { name: "greet", arguments: { name: "x" } };
    const body = JSON.stringify(modernBody("tools/call", params, { id: "bad-b64" }));
    const reply = await post(body, headersFor("tools/call", params, { "Mcp-Name": "=?base64?Z3JlZXQ?=" }));
    assertRejected(reply, { status: 400, code: ErrorCode.HeaderMismatch, id: "bad-b64", message: /invalid base64/ });
  });

  test("a base64-encoded Mcp-Name is decoded and accepted", async () => {
    const params = { name: "greet", arguments: { name: "Base" } };
    const encoded = `=?base64?${Buffer.from("greet").toString("base64")}?=`;
    const reply = await call("tools/call", params, { id: "b64", headers: { "Mcp-Name": encoded } });
    assert.equal(reply.status, 200, JSON.stringify(reply.message));
    assert.equal(reply.message.id, "b64");
    assert.deepEqual((resultOf(reply).content as JsonObject[])[0], { type: "text", text: "Hello, Base!" });
  });

  test("an Mcp-Name with surrounding whitespace is accepted", async () => {
    const params = { name: "greet", arguments: { name: "Spaces" } };
    const body = JSON.stringify(modernBody("tools/call", params, { id: "ws" }));
    const reply = await nodeRequest("POST", { ...headersFor("tools/call", params), "Mcp-Name": "  greet \t" }, body);
    assert.equal(reply.status, 200, JSON.stringify(reply.json));
    assert.equal(reply.json.id, "ws");
    assert.deepEqual(((reply.json.result as JsonObject).content as JsonObject[])[0], { type: "text", text: "Hello, Spaces!" });
  });

  test("an unsupported protocol version gets -32022 / 400 with data.supported and data.requested", async () => {
    const reply = await call(
      "server/discover",
      {},
      {
        id: 301,
        meta: { [META.protocolVersion]: "v999.0.0" },
        headers: { "MCP-Protocol-Version": "v999.0.0" },
      },
    );
    assertRejected(reply, {
      status: 400,
      code: ErrorCode.UnsupportedProtocolVersion,
      id: 301,
      message: /Unsupported protocol version 'v999\.0\.0'.*2026-07-28/,
    });
    assert.deepEqual(errorOf(reply).data, { supported: [PROTOCOL_VERSION], requested: "v999.0.0" });
  });

  test("a header version that differs from the _meta version gets -32020 / 400, not -32022", async () => {
    const reply = await call("server/discover", {}, { id: 302, meta: { [META.protocolVersion]: "v999.0.0" } });
    assertRejected(reply, {
      status: 400,
      code: ErrorCode.HeaderMismatch,
      id: 302,
      message: /MCP-Protocol-Version header value '2026-07-28' does not match body value 'v999\.0\.0'/,
    });
  });
});

// ---- methods ---------------------------------------------------------------------------------------

describe("front door: methods", () => {
  test("an unknown method gets -32601 / 404 naming it", async () => {
    const reply = await call("unknown/method", {}, { id: "unknown-1" });
    assertRejected(reply, { status: 404, code: ErrorCode.MethodNotFound, id: "unknown-1", message: /unknown\/method/ });
  });

  test("initialize carrying modern _meta gets -32601 / 404 pointing at server/discover", async () => {
    const params = { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "c", version: "1" } };
    const reply = await call("initialize", params, { id: "init-1" });
    assertRejected(reply, {
      status: 404,
      code: ErrorCode.MethodNotFound,
      id: "init-1",
      message: /'initialize' was removed.*server\/discover/,
    });
  });

  test("ping gets -32601 / 404", async () => {
    const reply = await call("ping", {}, { id: "ping-1" });
    assertRejected(reply, { status: 404, code: ErrorCode.MethodNotFound, id: "ping-1", message: /'ping' was removed/ });
  });

  test("tasks/list gets -32601 / 404 even with the tasks extension declared", async () => {
    const reply = await call("tasks/list", {}, { id: "tl-1", capabilities: TASKS_CAPS });
    assertRejected(reply, { status: 404, code: ErrorCode.MethodNotFound, id: "tl-1", message: /'tasks\/list' does not exist/ });
  });

  test("a notification POST is accepted with 202 and an empty body", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
    const reply = await post(body, headersFor("notifications/initialized", {}));
    assert.equal(reply.status, 202);
    assert.equal(reply.text, "");
  });

  test("tasks/get without the tasks extension gets -32021 / 400 with data.requiredCapabilities, before any lookup", async () => {
    const reply = await call("tasks/get", { taskId: "gate-test" }, { id: "gate-1" });
    assertRejected(reply, {
      status: 400,
      code: ErrorCode.MissingRequiredClientCapability,
      id: "gate-1",
      message: new RegExp(TASKS_EXTENSION),
    });
    assert.deepEqual(errorOf(reply).data, { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
  });

  test("tasks/get of an unknown task id with the extension gets -32602", async () => {
    const reply = await call("tasks/get", { taskId: "no-such-task" }, { id: "tg-1", capabilities: TASKS_CAPS });
    assert.equal(reply.message.id, "tg-1");
    const error = errorOf(reply);
    assert.equal(error.code, ErrorCode.InvalidParams);
    assert.match(error.message, /Task not found/);
  });
});

// ---- HTTP level ---------------------------------------------------------------------------------

describe("front door: HTTP level", () => {
  for (const method of ["GET", "DELETE"]) {
    test(`${method} without a legacy session gets 405 with Allow: POST`, async () => {
      const response = await fetch(stack.url, {
        method,
        headers: { Authorization: `Bearer ${TOKEN}`, Accept: "application/json, text/event-stream" },
      });
      const json = (await response.json()) as JsonObject;
      assert.equal(response.status, 405);
      assert.equal(response.headers.get("allow"), "POST");
      assert.match((json.error as { message: string }).message, /POST only/);
    });
  }

  test("an Origin that is not allowed gets 403 naming the option to change", async () => {
    const reply = await post(toolsListBody("origin"), headersFor("tools/list", {}, { Origin: "http://evil.example" }));
    assertRejected(reply, {
      status: 403,
      code: ErrorCode.InvalidRequest,
      id: null,
      message: /Origin 'http:\/\/evil\.example' is not allowed.*allowedOrigins/,
    });
  });

  test("a loopback Origin is accepted", async () => {
    const reply = await call("tools/list", {}, { headers: { Origin: "http://localhost:5173" } });
    assert.equal(reply.status, 200);
  });

  test("a Host that is not allowed gets 403 naming the option to change", async () => {
    const reply = await nodeRequest("POST", { ...headersFor("tools/list", {}), Host: "evil.example" }, toolsListBody("host"));
    assertRejected(reply, {
      status: 403,
      code: ErrorCode.InvalidRequest,
      id: null,
      message: /Host 'evil\.example' is not allowed.*allowedHosts/,
    });
  });

  test("a body over the limit gets 413 naming the limit and the option", async () => {
    const params = { name: "greet", arguments: { name: "x".repeat(BODY_LIMIT * 2) } };
    const reply = await post(JSON.stringify(modernBody("tools/call", params, { id: "big" })), headersFor("tools/call", params));
    assertRejected(reply, {
      status: 413,
      code: ErrorCode.InvalidRequest,
      id: null,
      message: new RegExp(`${BODY_LIMIT} bytes.*bodyLimitBytes`),
    });
  });

  test("an over-limit body uploaded in chunks gets its 413, every time (the client is not cut off mid-upload)", async () => {
    const params = { name: "greet", arguments: { name: "x".repeat(BODY_LIMIT * 10) } };
    const body = new TextEncoder().encode(JSON.stringify(modernBody("tools/call", params, { id: "chunked" })));
    for (let run = 0; run < 10; run++) {
      const chunks = (async function* () {
        for (let at = 0; at < body.length; at += 512) {
          yield body.subarray(at, at + 512);
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      const response = await fetch(stack.url, {
        method: "POST",
        headers: headersFor("tools/call", params),
        body: chunks,
        duplex: "half",
      } as RequestInit);
      assert.equal(response.status, 413, `run ${run}`);
      assert.match(((await response.json()) as { error: { message: string } }).error.message, /bodyLimitBytes/);
    }
  });

  test("arguments nested 8,000 levels deep get -32602 before any work (no stack overflow), and taskgate keeps serving", async () => {
    const wide = await startStack({ speed: 50 }); // default body limit: the deep body fits
    try {
      const params = { name: "greet", arguments: { name: "x" } };
      // Built as text: JSON.stringify itself cannot go that deep.
      const deep = `${'{"d":'.repeat(8_000)}"bottom"${"}".repeat(8_000)}`;
      const text = JSON.stringify(modernBody("tools/call", params, { id: "deep" })).replace('"name":"x"', `"name":"x","deep":${deep}`);
      const headers = { ...headersFor("tools/call", params), Authorization: "Bearer alice" };
      const response = await fetch(wide.url, { method: "POST", headers, body: text });
      assert.equal(response.status, 200);
      const body = (await response.json()) as { id: string; error: { code: number; message: string } };
      assert.equal(body.id, "deep");
      assert.equal(body.error.code, ErrorCode.InvalidParams);
      assert.match(body.error.message, /nested more than 128 levels/);
      const after = await fetch(wide.url, { method: "POST", headers, body: JSON.stringify(modernBody("tools/call", params)) });
      assert.equal(((await after.json()) as { result: { content: unknown } }).result.content instanceof Array, true);
    } finally {
      await wide.close();
    }
  });

  test("a missing Authorization header gets 401 with WWW-Authenticate and the request id", async () => {
    const reply = await rpc(stack.url, "tools/list", {}, { id: "anon", token: null });
    assertRejected(reply, {
      status: 401,
      code: ErrorCode.InvalidRequest,
      id: "anon",
      message: /Authorization: Bearer <token> is required/,
    });
    const challenge = reply.headers.get("www-authenticate") ?? "";
    assert.match(challenge, /^Bearer(\s|$)/);
    // RFC 6750 §3.1: a request without a token gets no error attribute.
    assert.doesNotMatch(challenge, /error=/);
  });

  test("a wrong bearer token gets 401 with WWW-Authenticate", async () => {
    const reply = await rpc(stack.url, "tools/list", {}, { id: "wrong", token: WRONG_TOKEN });
    assertRejected(reply, { status: 401, code: ErrorCode.InvalidRequest, id: "wrong", message: /bearer token is not valid/ });
    assert.match(reply.headers.get("www-authenticate") ?? "", /^Bearer .*invalid_token/);
  });
});

// ---- logging --------------------------------------------------------------------------------------

describe("front door: logging", () => {
  test("no log line contains a bearer token (valid or not)", async () => {
    // Traffic that reaches the upstream and back, an auth failure, and an envelope error.
    assert.equal((await call("tools/call", { name: "greet", arguments: { name: "log" } })).status, 200);
    assert.equal((await rpc(stack.url, "tools/list", {}, { token: WRONG_TOKEN })).status, 401);
    assert.equal((await call("ping")).status, 404);
    // The last request's line is written by its close handler, after the reply.
    await eventually(() => logLines.some((l) => l.includes('"event":"request"') && l.includes('"status":404')), "the 404's request line");

    assert.ok(logLines.length > 10, `the in-memory log captured lines (${logLines.length})`);
    assert.ok(
      logLines.some((l) => l.includes('"event":"request"') && l.includes('"subject":"alice"')),
      "request lines name the subject",
    );
    const leaks = logLines.filter((l) => l.includes(TOKEN) || l.includes(WRONG_TOKEN));
    assert.deepEqual(leaks, [], "no log line carries a bearer token");
  });
});
