// E2E: server/discover and every relayed list/read method, over real HTTP through a running taskgate
// in front of the real example legacy server. Also: the gateway survives the upstream forgetting
// its sessions. Run: node --import tsx --test test/e2e/relay.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ErrorCode, LEGACY_RESOURCE_NOT_FOUND } from "../../src/protocol/errors.js";
import { type JsonObject, META, PROTOCOL_VERSION, TASKS_EXTENSION } from "../../src/protocol/wire.js";
import { errorOf, resultOf, rpc } from "../support/mcpClient.js";
import { type Stack, startStack } from "../support/stack.js";

const SERVER_INFO = { name: "example-legacy-server", version: "1.0.0" };
const TOOLS = ["broken_tool", "build_report", "fail_tool", "greet", "slow_echo", "two_rounds"];

let stack: Stack;
before(async () => {
  stack = await startStack({ speed: 50, config: { cache: { ttlMs: 30_000, cacheScope: "private" } } });
});
after(async () => {
  await stack.close();
});

function assertJsonOk(reply: { status: number; contentType: string; message: JsonObject }, id?: string | number): void {
  assert.equal(reply.status, 200, JSON.stringify(reply.message));
  assert.match(reply.contentType, /^application\/json/);
  assert.equal(reply.message.jsonrpc, "2.0");
  if (id !== undefined) assert.equal(reply.message.id, id);
  assert.ok(reply.message.result, `expected a result, got ${JSON.stringify(reply.message)}`);
}

function assertCacheable(result: JsonObject): void {
  assert.equal(result.resultType, "complete");
  assert.equal(result.ttlMs, 30_000);
  assert.equal(result.cacheScope, "private");
}

describe("server/discover", () => {
  test("advertises the upstream's capabilities plus the tasks extension, and no legacy `tasks` key", async () => {
    const reply = await rpc(stack.url, "server/discover", {}, { id: "discover-1" });
    assertJsonOk(reply, "discover-1");
    const result = resultOf(reply);
    const caps = result.capabilities as JsonObject;
    for (const key of ["tools", "prompts", "resources", "completions"]) assert.ok(caps[key], `capability ${key} is advertised`);
    assert.deepEqual((caps.extensions as JsonObject)[TASKS_EXTENSION], {});
    assert.equal("tasks" in caps, false, "2026-07-28 has no `tasks` server capability");
  });

  test("carries supportedVersions, ttlMs, cacheScope, resultType, instructions and serverInfo in result _meta", async () => {
    const result = resultOf(await rpc(stack.url, "server/discover", {}));
    assert.deepEqual(result.supportedVersions, [PROTOCOL_VERSION]);
    assertCacheable(result);
    assert.equal(result.instructions, "An example legacy MCP server for taskgate demos.");
    assert.deepEqual((result._meta as JsonObject)[META.serverInfo], SERVER_INFO);
    assert.equal("serverInfo" in result, false, "serverInfo lives in result _meta, not in the body");
  });

  test("works without clientInfo and with it", async () => {
    // modernBody sends no clientInfo at all; the spec forbids requiring it.
    assertJsonOk(await rpc(stack.url, "server/discover", {}));
    const withInfo = await rpc(stack.url, "server/discover", {}, { meta: { [META.clientInfo]: { name: "e2e", version: "1.0.0" } } });
    assertJsonOk(withInfo);
  });
});

describe("relayed methods", () => {
  test("tools/list lists the upstream tools without `execution`, with resultType, ttlMs and cacheScope", async () => {
    const reply = await rpc(stack.url, "tools/list", {}, { id: 11 });
    assertJsonOk(reply, 11);
    const result = resultOf(reply);
    assertCacheable(result);
    const tools = result.tools as JsonObject[];
    const names = tools.map((t) => t.name);
    for (const name of TOOLS) assert.ok(names.includes(name), `tools/list includes ${name}`);
    for (const tool of tools) {
      assert.equal("execution" in tool, false, `tool ${String(tool.name)} carries no 2025-11-25 execution field`);
      assert.equal((tool.inputSchema as JsonObject).type, "object");
    }
  });

  test("prompts/list lists the summarize prompt", async () => {
    const result = resultOf(await rpc(stack.url, "prompts/list", {}));
    assertCacheable(result);
    const prompts = result.prompts as JsonObject[];
    const summarize = prompts.find((p) => p.name === "summarize");
    assert.ok(summarize, "summarize is listed");
    assert.deepEqual(
      (summarize.arguments as JsonObject[]).map((a) => a.name),
      ["topic"],
    );
  });

  test("prompts/get renders the prompt with its argument", async () => {
    const reply = await rpc(stack.url, "prompts/get", { name: "summarize", arguments: { topic: "billing" } }, { id: "pg-1" });
    assertJsonOk(reply, "pg-1");
    const result = resultOf(reply);
    assert.equal(result.resultType, "complete");
    const messages = result.messages as { role: string; content: { type: string; text: string } }[];
    assert.equal(messages[0]?.role, "user");
    assert.equal(messages[0]?.content.text, "Please summarize recent activity on billing.");
  });

  test("resources/list lists the readme and the counter", async () => {
    const result = resultOf(await rpc(stack.url, "resources/list", {}));
    assertCacheable(result);
    const uris = (result.resources as JsonObject[]).map((r) => r.uri);
    assert.ok(uris.includes("example://readme"));
    assert.ok(uris.includes("example://counter"));
  });

  test("resources/templates/list lists the months template", async () => {
    const result = resultOf(await rpc(stack.url, "resources/templates/list", {}));
    assertCacheable(result);
    const templates = (result.resourceTemplates as JsonObject[]).map((t) => t.uriTemplate);
    assert.deepEqual(templates, ["example://months/{month}"]);
  });

  test("resources/read returns the contents, cacheable", async () => {
    const reply = await rpc(stack.url, "resources/read", { uri: "example://months/2025-02" });
    assertJsonOk(reply);
    const result = resultOf(reply);
    assertCacheable(result);
    const contents = result.contents as JsonObject[];
    assert.equal(contents[0]?.uri, "example://months/2025-02");
    assert.equal(contents[0]?.text, "Figures for 2025-02: 42 orders, 3 refunds.");
  });

  test("resources/read of a missing resource is -32602 (never the legacy -32002), with the request id", async () => {
    const reply = await rpc(stack.url, "resources/read", { uri: "example://nope" }, { id: "missing-1" });
    assert.equal(reply.message.id, "missing-1");
    const error = errorOf(reply);
    assert.ok(error, `expected an error, got ${JSON.stringify(reply.message)}`);
    assert.equal(error.code, ErrorCode.InvalidParams);
    assert.notEqual(error.code, LEGACY_RESOURCE_NOT_FOUND);
    assert.match(error.message, /example:\/\/nope/);
    assert.equal("result" in reply.message, false);
  });

  test("completion/complete completes a prompt argument, with resultType", async () => {
    const reply = await rpc(stack.url, "completion/complete", {
      ref: { type: "ref/prompt", name: "summarize" },
      argument: { name: "topic", value: "de" },
    });
    assertJsonOk(reply);
    const result = resultOf(reply);
    assert.equal(result.resultType, "complete");
    assert.deepEqual((result.completion as JsonObject).values, ["deploys"]);
  });

  test("completion/complete completes a resource template variable", async () => {
    const result = resultOf(
      await rpc(stack.url, "completion/complete", {
        ref: { type: "ref/resource", uri: "example://months/{month}" },
        argument: { name: "month", value: "2025-0" },
      }),
    );
    assert.equal(((result.completion as JsonObject).values as string[]).length, 6);
  });
});

describe("upstream session expiry", () => {
  test("after the upstream forgets every session, tools/list still works (the gateway re-initialises)", async () => {
    // Make sure the gateway holds an upstream session first.
    assertJsonOk(await rpc(stack.url, "tools/list", {}));
    assert.ok(stack.legacy.sessionCount() >= 1);
    await stack.legacy.expireAllSessions();
    assert.equal(stack.legacy.sessionCount(), 0);

    const reply = await rpc(stack.url, "tools/list", {}, { id: "after-expiry" });
    assertJsonOk(reply, "after-expiry");
    const names = (resultOf(reply).tools as JsonObject[]).map((t) => t.name);
    assert.ok(names.includes("greet"));
    assert.ok(stack.legacy.sessionCount() >= 1, "a new upstream session was opened");

    // And a tool call on the fresh session works too.
    const call = await rpc(stack.url, "tools/call", { name: "greet", arguments: { name: "again" } });
    assert.deepEqual((resultOf(call).content as JsonObject[])[0], { type: "text", text: "Hello, again!" });
  });
});
