// E2E: how the legacy door forwards a request. The example legacy server, behind a recording proxy
// of ours, sees what taskgate sends it: the caller's end-to-end headers with the upstream's Host, and
// none of the hop-by-hop ones (they belong to the caller's connection). An answer's status line does
// not wait for a silent stream's first event (GET or POST); a caller that leaves its GET
// stream ends the upstream's stream too; an upstream that dies mid-answer (SIGKILL) breaks the
// caller's answer off instead of leaving it open. An upstream that cannot be connected to (a listener whose
// process is stopped with its accept queue full, a real fault) is answered 502 once
// upstream.connectTimeoutMs has passed, naming the option.
// Run: node --import tsx --test test/e2e/legacyForwarding.test.ts

import assert from "node:assert/strict";
import { type IncomingHttpHeaders, request } from "node:http";
import { after, before, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import { ErrorCode } from "../../src/protocol/errors.js";
import { closeAll } from "../support/closeAll.js";
import { type FaultGateway, startFaultGateway } from "../support/inProcessGateway.js";
import { LEGACY_VERSION, legacyInitialize } from "../support/legacyClient.js";
import { type CountingProxy, startCountingProxy } from "../support/servers/countingProxy.js";
import { LegacyProcess } from "../support/servers/legacyProcess.js";
import { type StoppedListener, startStoppedListener } from "../support/servers/stoppedListener.js";
import { eventually, within } from "../support/waiting.js";

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** One request with node:http, which (unlike fetch) sends any header it is given, hop-by-hop ones included. */
function rawRequest(url: string, method: string, headers: Record<string, string>, body?: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const out = request(url, { method, headers: { ...headers, ...(body ? { "content-length": String(Buffer.byteLength(body)) } : {}) } });
    out.on("error", reject);
    out.on("response", (answer) => {
      let text = "";
      answer.setEncoding("utf8");
      answer.on("data", (chunk: string) => {
        text += chunk;
      });
      answer.on("end", () => resolve({ status: answer.statusCode ?? 0, headers: answer.headers, text }));
    });
    out.end(body);
  });
}

interface OpenStream {
  status: number;
  close(): void;
}

/** A GET stream on a session, open once its status line came (bounded); close() leaves it. */
async function openStream(url: string, session: Record<string, string>): Promise<OpenStream> {
  const stream = request(url, { method: "GET", headers: { accept: "text/event-stream", ...session } });
  stream.end();
  const status = await within(
    5_000,
    "a GET stream's status line",
    new Promise<number>((resolve, reject) => {
      stream.on("response", (answer) => {
        answer.on("error", () => undefined);
        answer.resume();
        resolve(answer.statusCode ?? 0);
      });
      stream.on("error", reject);
    }),
  );
  stream.on("error", () => undefined);
  return { status, close: () => stream.destroy() };
}

const POST_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** A legacy session opened through `url` (initialize, then notifications/initialized, answered 202): its headers. */
async function openSession(url: string, id?: number): Promise<Record<string, string>> {
  const opened = await rawRequest(url, "POST", POST_HEADERS, JSON.stringify(legacyInitialize(id)));
  const session = { "mcp-session-id": String(opened.headers["mcp-session-id"]), "mcp-protocol-version": LEGACY_VERSION };
  const initialized = await rawRequest(
    url,
    "POST",
    { ...POST_HEADERS, ...session },
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  );
  assert.equal(initialized.status, 202);
  return session;
}

describe("the legacy door forwards end-to-end headers only, and ends what the caller leaves", () => {
  let legacy: LegacyServer;
  let proxy: CountingProxy;
  /** In front of the recording proxy (what the upstream is sent), and in front of the server itself (its streams). */
  let gw: FaultGateway;
  let direct: FaultGateway;
  before(async () => {
    legacy = await startLegacyServer({ port: 0, speed: 20 });
    proxy = await startCountingProxy(legacy.url);
    gw = await startFaultGateway(proxy.url, { shutdown: { graceMs: 0 } });
    direct = await startFaultGateway(legacy.url, { shutdown: { graceMs: 0 } });
  });
  after(() =>
    closeAll(
      () => gw?.close(),
      () => direct?.close(),
      () => proxy?.close(),
      () => legacy?.close(),
    ),
  );

  test("hop-by-hop headers (Connection and those it names, Keep-Alive, TE, Proxy-Authorization) stay on the caller's connection", async () => {
    const answer = await rawRequest(
      gw.url,
      "POST",
      {
        ...POST_HEADERS,
        connection: "keep-alive, x-hop",
        "x-hop": "only-this-connection",
        "keep-alive": "timeout=5",
        te: "trailers",
        "proxy-authorization": "Basic Zm9vOmJhcg==",
        "x-end-to-end": "kept",
      },
      JSON.stringify(legacyInitialize()),
    );
    assert.equal(answer.status, 200, answer.text);
    assert.ok(typeof answer.headers["mcp-session-id"] === "string", "the upstream's session id came back");
    const seen = proxy.seen.at(-1);
    assert.ok(seen, "the request reached the upstream");
    assert.equal(seen.headers["x-end-to-end"], "kept");
    assert.equal(seen.headers.host, new URL(proxy.url).host, "the upstream's own Host");
    for (const name of ["x-hop", "keep-alive", "te", "proxy-authorization"]) {
      assert.equal(seen.headers[name], undefined, `${name} was forwarded`);
    }
    assert.ok(!/x-hop/i.test(String(seen.headers.connection ?? "")), "the Connection header named x-hop upstream");
  });

  test("a GET stream's status line comes at once; a caller that leaves the stream ends the upstream's (its connection closes)", async () => {
    const session = await openSession(direct.url, 7);
    // The SDK 1.x server holds one GET stream per session and answers another 409 while it does.
    const first = await openStream(direct.url, session);
    assert.equal(first.status, 200);
    const second = await openStream(direct.url, session);
    second.close();
    assert.equal(second.status, 409, "the upstream holds the first stream");
    first.close();
    let third: OpenStream | undefined;
    await eventually(async () => {
      third?.close();
      third = await openStream(direct.url, session);
      return third.status === 200;
    }, "the upstream letting the session open a stream again once the caller left its first");
    third?.close();
  });

  test("a POST whose upstream answers with an SSE stream and then nothing for long gets its status line at once", async () => {
    const session = await openSession(direct.url, 8);
    // 30 s upstream (speed 20), no progress asked for: the upstream's stream opens and stays silent.
    const call = { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "slow_echo", arguments: { text: "later", ms: 600_000 } } };
    const out = request(direct.url, { method: "POST", headers: { ...POST_HEADERS, ...session } });
    out.on("error", () => undefined);
    out.end(JSON.stringify(call));
    try {
      const answer = await within(
        5_000,
        "the status line of a silent SSE answer",
        new Promise<{ status: number; type: string | undefined; bodyYet: boolean }>((resolve, reject) => {
          out.on("response", (got) => {
            let bodyYet = false;
            got.on("data", () => (bodyYet = true));
            got.on("error", () => undefined);
            // A turn later: any body bytes that came with the status line would have been read by now.
            setImmediate(() => resolve({ status: got.statusCode ?? 0, type: got.headers["content-type"], bodyYet }));
          });
          out.on("error", reject);
        }),
      );
      assert.equal(answer.status, 200);
      assert.match(String(answer.type), /text\/event-stream/);
      assert.equal(answer.bodyYet, false, "the upstream's call was still running, yet the status line came");
    } finally {
      out.destroy();
    }
  });
});

describe("an upstream that dies mid-answer (the example server as a process, SIGKILLed)", () => {
  let legacy: LegacyProcess;
  let gw: FaultGateway;
  before(async () => {
    legacy = await LegacyProcess.start({ speed: 1 });
    gw = await startFaultGateway(legacy.url, { shutdown: { graceMs: 0 } });
  });
  after(() =>
    closeAll(
      () => gw?.close(),
      () => legacy?.close(),
    ),
  );

  test("the caller's streamed answer is broken off too, not ended as if it were complete", async () => {
    const session = await openSession(gw.url);
    const call = {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "slow_echo", arguments: { text: "never", ms: 60_000, progressMs: 50 }, _meta: { progressToken: "p" } },
    };
    const out = request(gw.url, { method: "POST", headers: { ...POST_HEADERS, ...session } });
    out.on("error", () => undefined);
    out.end(JSON.stringify(call));
    const ending = within(
      10_000,
      "the caller's answer ending after the upstream died",
      new Promise<{ complete: boolean; sawProgress: boolean }>((resolve, reject) => {
        out.on("response", (answer) => {
          let sawProgress = false;
          answer.setEncoding("utf8");
          answer.on("data", (chunk: string) => {
            if (!sawProgress && chunk.includes("notifications/progress")) {
              sawProgress = true;
              void legacy.kill();
            }
          });
          answer.on("error", () => undefined);
          answer.on("close", () => resolve({ complete: answer.complete, sawProgress }));
        });
        out.on("error", reject);
      }),
    );
    const { complete, sawProgress } = await ending;
    assert.ok(sawProgress, "progress came through before the upstream was killed");
    assert.equal(complete, false, "the answer ended as if complete");
  });
});

describe("an upstream that cannot be connected to (a stopped listener with a full accept queue, a real fault)", () => {
  let listener: StoppedListener;
  let gw: FaultGateway;
  before(async () => {
    listener = await startStoppedListener();
    gw = await startFaultGateway(listener.url, { upstream: { connectTimeoutMs: 300 }, shutdown: { graceMs: 0 } });
  });
  after(() =>
    closeAll(
      () => gw?.close(),
      () => listener?.close(),
    ),
  );

  test("a legacy initialize is answered 502 naming upstream.connectTimeoutMs, once that limit has passed", async () => {
    const started = Date.now();
    const answer = await within(
      10_000,
      "the legacy door's answer",
      rawRequest(gw.url, "POST", POST_HEADERS, JSON.stringify(legacyInitialize())),
    );
    const took = Date.now() - started;
    assert.equal(answer.status, 502, answer.text);
    const error = (JSON.parse(answer.text) as { error: { code: number; message: string } }).error;
    assert.equal(error.code, ErrorCode.InternalError);
    assert.match(error.message, /^Upstream unreachable: could not connect within 300 ms \(upstream\.connectTimeoutMs\)/);
    assert.ok(took >= 250, `answered after ${took} ms, before the limit`);
    assert.ok(
      gw.logs.lines.some((line) => line.event === "legacy.proxy.failed" && /connectTimeoutMs/.test(String(line.err))),
      "one legacy.proxy.failed line names the limit",
    );
  });
});
