// JsonRpcPeer over a scripted transport: how a request ends (result, upstream error, time limit,
// abort, session end), progress by token, and the upstream's own requests (answered, refused,
// withdrawn).
// Run: node --import tsx --test test/unit/jsonRpcPeer.test.ts

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createLogger } from "../../src/observability/logger.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { JsonRpcPeer, type PeerHandlers, type Progress } from "../../src/upstream/jsonRpcPeer.js";
import type { JsonRpcMessage } from "../../src/upstream/transport.js";
import { CallStopped, UpstreamFailure, UpstreamRpcError } from "../../src/upstream/upstreamFailure.js";
import { exchangeOf, type Script, ScriptedTransport, STANDALONE } from "../support/scriptedTransport.js";

const log = createLogger("silent");

function peerOn(script: Script, handlers: Partial<PeerHandlers> = {}) {
  const transport = new ScriptedTransport(script);
  const closed: UpstreamFailure[] = [];
  const peer = new JsonRpcPeer(
    transport,
    {
      request: handlers.request ?? (async () => ({})),
      notification: handlers.notification ?? (() => undefined),
      closed: handlers.closed ?? ((failure) => closed.push(failure)),
    },
    log,
  );
  return { peer, transport, closed };
}

const cancelsOf = (transport: ScriptedTransport) => transport.sentOf("notifications/cancelled").map((m) => m.params?.requestId);

describe("JsonRpcPeer", () => {
  test("a response ends its request with the result; an error response with UpstreamRpcError carrying the code", async () => {
    const { peer } = peerOn((message, t) => {
      if (message.method === "good") t.reply(message, { ok: true });
      if (message.method === "bad") t.fail(message, -32602, "no such thing");
    });
    assert.deepEqual(await peer.request("good", {}), { ok: true });
    await assert.rejects(peer.request("bad", {}), (error: unknown) => error instanceof UpstreamRpcError && error.error.code === -32602);
    assert.equal(peer.inFlight, 0);
  });

  test("no answer within the limit: upstream_timeout naming the option, notifications/cancelled sent, exchange closed", async () => {
    const { peer, transport } = peerOn(() => undefined);
    await assert.rejects(
      peer.request("slow", {}, { timeout: { ms: 20, option: "upstream.requestTimeoutMs" } }),
      (error: unknown) =>
        error instanceof UpstreamFailure && error.reason === "upstream_timeout" && /upstream\.requestTimeoutMs/.test(error.message),
    );
    const id = transport.sentOf("slow")[0]?.id;
    assert.deepEqual(cancelsOf(transport), [id]);
    assert.equal(transport.exchanges.get(id as number)?.closed, true);
  });

  test("a ping or initialize past its limit fails the same way but is not cancelled (a ping does no work to stop)", async () => {
    const { peer, transport } = peerOn(() => undefined);
    for (const method of ["ping", "initialize"]) {
      await assert.rejects(
        peer.request(method, {}, { timeout: { ms: 20, option: "upstream.pingTimeoutMs" } }),
        (error: unknown) => error instanceof UpstreamFailure && error.reason === "upstream_timeout",
      );
    }
    assert.deepEqual(cancelsOf(transport), []);
  });

  test("the caller's abort stops the request: CallStopped, notifications/cancelled, exchange closed; a late response is ignored", async () => {
    let request: JsonRpcMessage | undefined;
    const { peer, transport } = peerOn((message) => {
      if (message.method === "long") request = message;
    });
    const stop = new AbortController();
    const pending = peer.request("long", {}, { signal: stop.signal });
    await new Promise((resolve) => setImmediate(resolve));
    stop.abort("client left");
    await assert.rejects(pending, (error: unknown) => error instanceof CallStopped && /client left/.test(error.message));
    assert.deepEqual(cancelsOf(transport), [request?.id]);
    assert.equal(transport.exchanges.get(request?.id as number)?.closed, true);
    transport.reply(request as JsonRpcMessage, { late: true }); // nobody waits: no throw
    assert.equal(peer.inFlight, 0);
  });

  test("progress reaches the request whose token it carries (the peer sets the token), not another one", async () => {
    const seen: Array<[string, Progress]> = [];
    const { peer, transport } = peerOn((message, t) => {
      if (message.method === "b") {
        const token = (message.params?._meta as JsonObject).progressToken;
        t.notify("notifications/progress", { progressToken: token as number, progress: 1, total: 2, message: "half" }, STANDALONE);
        t.reply(message, {});
      }
    });
    const a = peer.request("a", {}, { onprogress: (p) => seen.push(["a", p]) });
    await peer.request("b", {}, { onprogress: (p) => seen.push(["b", p]) });
    assert.deepEqual(seen, [["b", { progress: 1, total: 2, message: "half" }]]);
    const first = transport.sentOf("a")[0] as JsonRpcMessage;
    transport.reply(first, {});
    await a;
  });

  test("an upstream request is answered through the handler; a refusal becomes its JSON-RPC error", async () => {
    const { transport } = peerOn(() => undefined, {
      request: async (message) => {
        if (message.method === "roots/list") return { roots: [] };
        throw new UpstreamRpcError({ code: -32601, message: "Method not found" });
      },
    });
    assert.deepEqual((await transport.ask("roots/list", {}, STANDALONE)).result, { roots: [] });
    assert.deepEqual((await transport.ask("sampling/createMessage", {}, STANDALONE)).error, { code: -32601, message: "Method not found" });
  });

  test("an upstream request the upstream cancels is withdrawn: the handler's signal aborts and no answer is sent", async () => {
    let withdrawn: AbortSignal | undefined;
    let release: (value: JsonObject) => void = () => undefined;
    const { transport } = peerOn(() => undefined, {
      request: (_message, _via, signal) => {
        withdrawn = signal;
        return new Promise((resolve) => (release = resolve));
      },
    });
    void transport.ask("elicitation/create", {}, exchangeOf(1));
    await new Promise((resolve) => setImmediate(resolve));
    transport.notify("notifications/cancelled", { requestId: "server-1" });
    assert.equal(withdrawn?.aborted, true);
    release({ action: "cancel" });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(
      transport.sent.some((m) => m.id === "server-1"),
      false,
      "nothing answers a withdrawn request",
    );
  });

  test("an exchange lost without its response fails the request as upstream_lost after a grace period", async () => {
    const { peer, transport } = peerOn((message, t) => {
      if (message.method === "call") t.receiver?.exchangeLost(message.id as number, "the stream broke");
    });
    await assert.rejects(
      peer.request("call", {}),
      (error: unknown) => error instanceof UpstreamFailure && error.reason === "upstream_lost" && /the stream broke/.test(error.message),
    );
    assert.equal(transport.sentOf("call").length, 1);
  });

  test("failAll ends every request in flight with its failure, and later requests fail at once", async () => {
    const { peer } = peerOn(() => undefined);
    const pending = peer.request("call", {});
    await new Promise((resolve) => setImmediate(resolve));
    peer.failAll(new UpstreamFailure("session_gone", "gone"), new UpstreamFailure("upstream_lost", "lost"));
    await assert.rejects(pending, (error: unknown) => error instanceof UpstreamFailure && error.reason === "upstream_lost");
    await assert.rejects(peer.request("next", {}), (error: unknown) => error instanceof UpstreamFailure && error.reason === "session_gone");
  });
});
