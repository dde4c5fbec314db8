// Issue 10, case 4: errors name their cause. An upstream that is unreachable from the start (nothing
// listens), that resets connections, or that is no MCP endpoint (a web server's HTML page) gets a
// 502 with data.reason and a message naming the URL, logged at warn without a stack. An error the
// upstream itself answers keeps its own code and message. Arguments nested 8,000 levels deep are
// the client's mistake: -32602, and nothing reaches the upstream. (Redis down: storeFailures.)

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import type { ToolStartedEvent } from "../../examples/legacy-server/state.js";
import { type JsonObject, PROTOCOL_VERSION } from "../../src/protocol/wire.js";
import { postRawWithin, rpcWithin } from "../support/boundedRpc.js";
import { closeAll } from "../support/closeAll.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { assertErrorReply } from "../support/expectError.js";
import { type FaultGateway, startFaultGateway } from "../support/inProcessGateway.js";
import { ANSWER_WITHIN_MS, literally, UPSTREAM_LIMITS } from "../support/limits.js";
import { LEVEL } from "../support/logCapture.js";
import { errorOf } from "../support/mcpClient.js";
import { deadUpstreamUrl } from "../support/ports.js";
import { type Blackhole, startBlackhole } from "../support/servers/blackhole.js";
import { timed } from "../support/waiting.js";

failIfStillRunning();

/** The requests an operator tries first: discover, a list, a call. */
const FIRST_REQUESTS: Array<[string, JsonObject]> = [
  ["server/discover", {}],
  ["tools/list", {}],
  ["tools/call", { name: "greet", arguments: { name: "x" } }],
];

describe("an upstream unreachable from the start (nothing listens on its port)", () => {
  let url: string;
  let gw: FaultGateway;
  before(async () => {
    url = await deadUpstreamUrl();
    gw = await startFaultGateway(url, { upstream: { ...UPSTREAM_LIMITS } });
  });
  after(() => closeAll(() => gw?.close()));

  test("discover, lists and calls answer 502 upstream_unreachable naming the URL, logged at warn without a stack", async (t) => {
    for (const [method, params] of FIRST_REQUESTS) {
      const { value: reply, ms } = await timed(() => rpcWithin(ANSWER_WITHIN_MS, gw.url, method, params));
      t.diagnostic(`${method}: HTTP ${reply.status} after ${ms} ms`);
      const error = assertErrorReply(
        reply,
        { http: 502, reason: "upstream_unreachable", message: new RegExp(`^Upstream unreachable at ${literally(url).source}: \\S`) },
        method,
      );
      assert.doesNotMatch(error.message, /^Internal error$/);
    }
    const warnings = gw.logs.lines.filter((line) => line.level === LEVEL.warn && JSON.stringify(line).includes(url));
    assert.ok(warnings.length > 0, `a warn line names the upstream URL; lines: ${JSON.stringify(gw.logs.lines).slice(0, 1000)}`);
    assert.deepEqual(gw.logs.withStack(), [], "expected failures are logged without a stack");
    assert.deepEqual(gw.logs.atOrAbove(LEVEL.error), [], "an unreachable upstream is an expected failure: warn, not error");
  });
});

describe("an upstream that resets every connection (a fault server)", () => {
  let blackhole: Blackhole;
  let gw: FaultGateway;
  before(async () => {
    blackhole = await startBlackhole("reset");
    gw = await startFaultGateway(blackhole.url, { upstream: { ...UPSTREAM_LIMITS } });
  });
  after(() =>
    closeAll(
      () => gw?.close(),
      () => blackhole?.close(),
    ),
  );

  test("server/discover answers 502 upstream_unreachable naming the URL", async () => {
    const reply = await rpcWithin(ANSWER_WITHIN_MS, gw.url, "server/discover", {});
    assertErrorReply(
      reply,
      {
        http: 502,
        reason: "upstream_unreachable",
        message: new RegExp(`^Upstream unreachable at ${literally(blackhole.url).source}: \\S`),
      },
      "server/discover",
    );
    assert.ok(blackhole.accepted() > 0, "taskgate did connect");
  });
});

describe("an upstream URL that serves an HTML page, not MCP (a fault server)", () => {
  let blackhole: Blackhole;
  let gw: FaultGateway;
  before(async () => {
    blackhole = await startBlackhole("html");
    gw = await startFaultGateway(blackhole.url, { upstream: { ...UPSTREAM_LIMITS } });
  });
  after(() =>
    closeAll(
      () => gw?.close(),
      () => blackhole?.close(),
    ),
  );

  test("discover, lists and calls answer 502 upstream_not_mcp saying what the URL answered", async () => {
    for (const [method, params] of FIRST_REQUESTS) {
      const reply = await rpcWithin(ANSWER_WITHIN_MS, gw.url, method, params);
      const error = assertErrorReply(
        reply,
        {
          http: 502,
          reason: "upstream_not_mcp",
          message: new RegExp(`^Upstream at ${literally(blackhole.url).source} is not an MCP endpoint: \\S`),
        },
        method,
      );
      assert.match(error.message, /html/i, "the message says what the URL answered");
    }
  });
});

describe("errors of a working upstream, and arguments nested too deep", () => {
  let legacy: LegacyServer;
  let gw: FaultGateway;
  before(async () => {
    legacy = await startLegacyServer({ port: 0 });
    gw = await startFaultGateway(legacy.url, { upstream: { ...UPSTREAM_LIMITS } });
  });
  after(() =>
    closeAll(
      () => gw?.close(),
      () => legacy?.close(),
    ),
  );

  test("the upstream's own JSON-RPC errors come back with their own code and message, HTTP 200", async () => {
    const cases: Array<[string, JsonObject, number, RegExp]> = [
      ["prompts/get", { name: "nope" }, -32602, /Prompt nope not found/],
      ["prompts/get", { name: "summarize", arguments: {} }, -32602, /Invalid arguments for prompt summarize/],
      ["resources/read", { uri: "example://nope" }, -32602, /Resource example:\/\/nope not found/],
      ["tools/call", { name: "broken_tool", arguments: {} }, -32603, /^broken_tool always fails$/],
    ];
    for (const [method, params, code, message] of cases) {
      const reply = await rpcWithin(ANSWER_WITHIN_MS, gw.url, method, params);
      const where = `${method} ${JSON.stringify(params)}`;
      assert.equal(reply.status, 200, `${where}: HTTP status`);
      assert.equal(errorOf(reply)?.code, code, `${where}: ${JSON.stringify(reply.message)}`);
      assert.match(errorOf(reply).message, message, where);
      assert.equal(
        errorOf(reply).data?.reason,
        undefined,
        `${where}: the upstream's own error is relayed as it is, not as a gateway failure`,
      );
    }
  });

  test("arguments nested 8,000 levels deep are refused with -32602, HTTP 200, and never reach the upstream", async () => {
    const depth = 8_000;
    const nested = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    const meta = JSON.stringify({
      "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
      "io.modelcontextprotocol/clientCapabilities": {},
    });
    const body = `{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"greet","arguments":{"name":"deep","nested":${nested}},"_meta":${meta}}}`;
    let reachedUpstream = false;
    const onStarted = (e: ToolStartedEvent) => {
      if (e.tool === "greet") reachedUpstream = true;
    };
    legacy.events.on("tool-started", onStarted);
    try {
      const reply = await postRawWithin(ANSWER_WITHIN_MS, gw.url, "tools/call", body, { name: "greet" });
      assert.equal(reply.status, 200, `HTTP status; reply: ${JSON.stringify(reply.message).slice(0, 500)}`);
      assert.equal(errorOf(reply)?.code, -32602, JSON.stringify(reply.message).slice(0, 500));
      assert.match(errorOf(reply).message, /nest|deep|depth/i, "the message says what is wrong");
      assert.equal(reply.message.id, "deep");
    } finally {
      legacy.events.off("tool-started", onStarted);
    }
    assert.equal(reachedUpstream, false, "nothing reached the upstream");
  });
});
