// Issue 10, case 5: a body over bodyLimitBytes gets its HTTP 413 and JSON-RPC error even though the
// client is still uploading when taskgate decides, in 10 of 10 runs, for the common ways a client
// uploads (fetch with a streamed or a whole body, node:http chunked or with Content-Length).
// Before the fix, the client usually saw EPIPE / "fetch failed" instead of the answer. taskgate
// runs in its own process here: in the test's process, client and server share one event loop
// and the race (taskgate closing while the client still writes) never shows.

import assert from "node:assert/strict";
import { type ClientRequest, request as httpRequest } from "node:http";
import { after, before, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import { closeAll } from "../support/closeAll.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { type GatewayProcess, GatewayProcesses } from "../support/gatewayProcess.js";
import { ANSWER_WITHIN_MS } from "../support/limits.js";
import { modernHeaders } from "../support/mcpClient.js";
import { within } from "../support/waiting.js";

failIfStillRunning();

const LIMIT = 262_144;
const BODY_BYTES = 8 * 1024 * 1024;
const CHUNK = 64 * 1024;
const RUNS = 10;

/** The start of a tools/call whose argument is then padded past the limit with chunk after chunk. */
const HEAD = Buffer.from('{"jsonrpc":"2.0","id":413,"method":"tools/call","params":{"name":"greet","arguments":{"name":"');
const FILLER = Buffer.alloc(CHUNK, "x");
const headers = modernHeaders("tools/call", { name: "greet" });

interface Outcome {
  status: number;
  body: string;
}

async function* chunks(): AsyncGenerator<Uint8Array> {
  yield HEAD;
  for (let sent = HEAD.length; sent < BODY_BYTES; sent += CHUNK) yield FILLER;
}

async function uploadWithFetch(url: string): Promise<Outcome> {
  const stream = ReadableStream.from(chunks());
  const response = await fetch(url, {
    method: "POST",
    headers,
    body: stream,
    duplex: "half",
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  } as RequestInit);
  return { status: response.status, body: await response.text() };
}

async function uploadWithFetchLength(url: string): Promise<Outcome> {
  const parts: Uint8Array[] = [];
  for await (const chunk of chunks()) parts.push(chunk);
  const body = Buffer.concat(parts);
  const response = await fetch(url, { method: "POST", headers, body, signal: AbortSignal.timeout(ANSWER_WITHIN_MS) });
  return { status: response.status, body: await response.text() };
}

function drainedOrClosed(req: ClientRequest): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      req.off("drain", done).off("close", done);
      resolve();
    };
    req.on("drain", done).on("close", done);
  });
}

function uploadWithHttp(url: string, declareLength: boolean): Promise<Outcome> {
  const framing = declareLength
    ? { "Content-Length": String(HEAD.length + Math.ceil((BODY_BYTES - HEAD.length) / CHUNK) * CHUNK) }
    : { "Transfer-Encoding": "chunked" };
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers: { ...headers, ...framing }, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      res.on("error", reject);
    });
    req.on("error", reject);
    void (async () => {
      for await (const chunk of chunks()) {
        if (req.destroyed) return;
        if (!req.write(chunk)) await drainedOrClosed(req);
      }
      req.end();
    })();
  });
}

describe("an over-limit body uploaded in chunks", () => {
  let legacy: LegacyServer;
  const processes = new GatewayProcesses();
  let gw: GatewayProcess;
  before(async () => {
    legacy = await startLegacyServer({ port: 0 });
    gw = await processes.start({ upstream: { url: legacy.url }, bodyLimitBytes: LIMIT });
  });
  after(() =>
    closeAll(
      () => processes.close(),
      () => legacy?.close(),
    ),
  );

  for (const [client, upload] of [
    ["fetch, streamed body", uploadWithFetch],
    ["fetch, whole body with Content-Length", uploadWithFetchLength],
    ["node:http, chunked transfer encoding", (url: string) => uploadWithHttp(url, false)],
    ["node:http, Content-Length declared, written in chunks", (url: string) => uploadWithHttp(url, true)],
  ] as const) {
    test(`${client}: HTTP 413 with the JSON-RPC error in ${RUNS} of ${RUNS} runs`, async () => {
      const failures: string[] = [];
      for (let run = 1; run <= RUNS; run++) {
        try {
          const outcome = await within(ANSWER_WITHIN_MS + 1_000, `upload ${run}`, upload(gw.url));
          const error = (JSON.parse(outcome.body) as { error?: { code: number; message: string } }).error;
          if (outcome.status !== 413 || error?.code !== -32600 || !/bodyLimitBytes/.test(error.message)) {
            failures.push(`run ${run}: HTTP ${outcome.status} ${outcome.body.slice(0, 200)}`);
          }
        } catch (error) {
          const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : "";
          failures.push(`run ${run}: ${error instanceof Error ? error.message : String(error)}${cause}`);
        }
      }
      assert.deepEqual(failures, [], `${failures.length} of ${RUNS} uploads did not get the 413`);
    });
  }
});
