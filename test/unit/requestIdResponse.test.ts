// The MCP endpoint's response class (http/requestIdResponse.ts) writes the request's id as
// X-Request-Id with the status line, whatever the writer passes to writeHead, and lets a writer's
// own X-Request-Id (an upstream's, passed through by the legacy door) win in any spelling: one
// value reaches the client, never both.

import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type OutgoingHttpHeader, type OutgoingHttpHeaders } from "node:http";
import { after, before, test } from "node:test";
import { RequestIdResponse } from "../../src/http/requestIdResponse.js";

type Writer = (res: RequestIdResponse) => void;
const writers = new Map<string, Writer>();
const server = createServer({ ServerResponse: RequestIdResponse }, (req, res) => {
  const writer = writers.get(req.url ?? "");
  if (!writer) return res.writeHead(404).end();
  writer(res);
});
let base = "";

before(async () => {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The raw X-Request-Id values the client got (a repeated header would show as two). */
async function idsSent(path: string, writer: Writer): Promise<string[]> {
  writers.set(path, writer);
  const response = await fetch(base + path);
  await response.text();
  const raw = response.headers.get("x-request-id");
  return raw === null ? [] : raw.split(", ");
}

const ours =
  (headers?: OutgoingHttpHeaders | OutgoingHttpHeader[], message?: string): Writer =>
  (res) => {
    res.requestId = "ours";
    if (message !== undefined) res.writeHead(200, message, headers);
    else res.writeHead(200, headers);
    res.end("ok");
  };

test("the request's id goes with the status line, whatever form writeHead is given", async () => {
  assert.deepEqual(await idsSent("/bare", ours()), ["ours"]);
  assert.deepEqual(await idsSent("/object", ours({ "Content-Type": "text/plain" })), ["ours"]);
  assert.deepEqual(await idsSent("/message", ours({ "Content-Type": "text/plain" }, "Fine")), ["ours"]);
  assert.deepEqual(await idsSent("/list", ours(["Content-Type", "text/plain"])), ["ours"]);
  const ended: Writer = (res) => {
    res.requestId = "ours";
    res.end("no writeHead at all");
  };
  assert.deepEqual(await idsSent("/implicit", ended), ["ours"]);
});

test("a writer's own X-Request-Id wins, in any spelling, and only it is sent", async () => {
  for (const name of ["x-request-id", "X-Request-Id", "X-REQUEST-ID", "x-Request-ID"]) {
    assert.deepEqual(await idsSent(`/own-${name}`, ours({ [name]: "theirs", "Content-Type": "text/plain" })), ["theirs"], name);
  }
  assert.deepEqual(await idsSent("/own-list", ours(["X-Request-ID", "theirs"])), ["theirs"]);
});

test("a header named only like it (same length, another name) does not stop ours", async () => {
  assert.deepEqual(await idsSent("/lookalike", ours({ "x-request-ix": "other" })), ["ours"]);
});

test("a response whose request id was not set carries none", async () => {
  assert.deepEqual(await idsSent("/none", (res) => res.writeHead(200, { "Content-Type": "text/plain" }).end("ok")), []);
});
