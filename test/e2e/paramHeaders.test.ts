// Mcp-Param-* headers end to end: the example server's `forecast` tool marks `region` and `days`
// with x-mcp-header; taskgate learns that from the upstream's tools/list and checks every call.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { errorOf, resultOf, rpc } from "../support/mcpClient.js";
import { type Stack, startStack } from "../support/stack.js";

describe("Mcp-Param-* headers on tools/call", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(() => stack.close());

  const forecast = (args: Record<string, unknown>, headers: Record<string, string>) =>
    rpc(stack.url, "tools/call", { name: "forecast", arguments: args }, { headers });

  test("tools/list shows the x-mcp-header marks", async () => {
    const tools = resultOf(await rpc(stack.url, "tools/list")).tools as Array<{
      name: string;
      inputSchema: { properties: Record<string, Record<string, unknown>> };
    }>;
    const tool = tools.find((t) => t.name === "forecast");
    assert.equal(tool?.inputSchema.properties.region?.["x-mcp-header"], "Region");
  });

  test("matching headers (plain and base64) are accepted and the call runs", async () => {
    const plain = await forecast({ region: "Hello", days: 3 }, { "Mcp-Param-Region": "Hello", "Mcp-Param-Days": "3" });
    assert.equal(plain.status, 200);
    assert.deepEqual(resultOf(plain).content, [{ type: "text", text: "Forecast for Hello: sunny for 3 day(s)." }]);
    const encoded = await forecast({ region: "Hello" }, { "Mcp-Param-Region": "=?base64?SGVsbG8=?=" });
    assert.equal(resultOf(encoded).resultType, "complete");
  });

  for (const [name, args, headers, message] of [
    ["a missing header", { region: "Hello" }, {}, /Missing required header Mcp-Param-Region/],
    ["a mismatched header", { region: "Hello" }, { "Mcp-Param-Region": "Paris" }, /does not match argument 'region'/],
    ["bad base64 padding", { region: "Hello" }, { "Mcp-Param-Region": "=?base64?SGVsbG8?=" }, /Mcp-Param-Region is malformed/],
    ["a numeric mismatch", { region: "x", days: 2 }, { "Mcp-Param-Region": "x", "Mcp-Param-Days": "5" }, /Mcp-Param-Days/],
  ] as const) {
    test(`${name} → HTTP 400, -32020, and the upstream tool never runs`, async () => {
      let ran = false;
      const onStart = (e: { tool: string }) => (ran ||= e.tool === "forecast");
      stack.legacy.events.on("tool-started", onStart);
      const reply = await forecast(args, headers);
      stack.legacy.events.off("tool-started", onStart);
      assert.equal(reply.status, 400);
      assert.equal(errorOf(reply).code, -32020);
      assert.match(errorOf(reply).message, message);
      assert.equal(reply.message.id !== undefined, true);
      assert.equal(ran, false);
    });
  }
});
