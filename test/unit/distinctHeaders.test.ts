// The front door's one pass over the raw headers (http/distinctHeaders.ts) sees Authorization,
// X-Request-Id and traceparent with every value sent, exactly as Node's headersDistinct does,
// whatever their case, and nothing else.

import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import { connect } from "node:net";
import { test } from "node:test";
import { distinctHeaders } from "../../src/http/distinctHeaders.js";

/** The request Node parses from `head` (raw header lines, so names keep their case and repeat). */
async function parsed(head: string[]): Promise<IncomingMessage> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  const arrived = once(server, "request") as Promise<[IncomingMessage, import("node:http").ServerResponse]>;
  const socket = connect(port, "127.0.0.1");
  socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n${head.map((line) => `${line}\r\n`).join("")}\r\n`);
  const [req, res] = await arrived;
  res.end();
  socket.destroy();
  server.close();
  return req;
}

test("every value of the three headers, as headersDistinct has them, whatever their case", async () => {
  const req = await parsed([
    "authorization: Bearer one",
    "AUTHORIZATION: Bearer two",
    "X-Request-Id: abc",
    "x-request-id: def",
    "TraceParent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "X-Other: 1",
    "accept: application/json",
  ]);
  const found = distinctHeaders(req.rawHeaders);
  assert.deepEqual(found, {
    authorization: req.headersDistinct.authorization,
    "x-request-id": req.headersDistinct["x-request-id"],
    traceparent: req.headersDistinct.traceparent,
  });
  assert.deepEqual(found.authorization, ["Bearer one", "Bearer two"]);
  assert.deepEqual(found["x-request-id"], ["abc", "def"]);
});

test("headers not sent are absent; names of the same length are not mistaken for them", async () => {
  const req = await parsed(["x-request-ie: nope", "authorisation: Bearer x", "traceparenz: 1"]);
  assert.deepEqual(distinctHeaders(req.rawHeaders), {});
  assert.deepEqual(distinctHeaders([]), {});
});
