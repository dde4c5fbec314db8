// The legacy doors' span helpers on their own: which messages get a span, and the JSON-RPC
// response found in a proxied answer (JSON or SSE) as it streams by, whatever its chunks.

import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { tracedRequestOf, watchResponse } from "../../src/observability/legacySpan.js";

test("a span is for one JSON-RPC request: not a ping, a notification, an answer or a batch", () => {
  assert.deepEqual(tracedRequestOf({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "greet" } }), {
    method: "tools/call",
    id: 3,
    params: { name: "greet" },
  });
  assert.deepEqual(tracedRequestOf({ jsonrpc: "2.0", id: "a", method: "tools/list" })?.params, {});
  assert.equal(tracedRequestOf({ jsonrpc: "2.0", id: 1, method: "ping" }), undefined);
  assert.equal(tracedRequestOf({ jsonrpc: "2.0", method: "notifications/initialized" }), undefined);
  assert.equal(tracedRequestOf({ jsonrpc: "2.0", id: 1, result: {} }), undefined);
  assert.equal(tracedRequestOf([{ jsonrpc: "2.0", id: 1, method: "tools/list" }]), undefined);
});

/** What watchResponse found in `chunks`, streamed as a proxied answer. */
function found(id: string | number, chunks: string[]): Promise<Record<string, unknown> | undefined> {
  const answer = new PassThrough();
  const seen = new Promise<Record<string, unknown> | undefined>((resolve) =>
    watchResponse(answer as unknown as IncomingMessage, id, resolve),
  );
  for (const chunk of chunks) answer.write(chunk);
  answer.end();
  return seen;
}

test("the response to the request is found in a JSON answer and in an SSE stream split anywhere", async () => {
  assert.deepEqual(await found(7, ['{"jsonrpc":"2.0","id":7,', '"error":{"code":-32601,"message":"no"}}']), {
    jsonrpc: "2.0",
    id: 7,
    error: { code: -32601, message: "no" },
  });
  const sse = [
    'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n',
    'event: message\ndata: {"jsonrpc":"2.0","id":"x","method":"elicitation/create"}\n\nevent: message\nda',
    'ta: {"jsonrpc":"2.0","id":7,"result":{"content":[]}}\n\n',
  ];
  assert.deepEqual((await found(7, sse))?.result, { content: [] });
  assert.equal(await found(8, sse), undefined, "another request's response is not this one's");
  assert.equal(await found(7, ["not json"]), undefined);
});
