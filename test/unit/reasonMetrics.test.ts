// Every catalogued reason (protocol/reasons.ts) is counted under that reason: a reply naming it
// moves taskgate_error_replies_total{reason} by one and taskgate_requests_total under the outcome
// the catalogue gives it, whether the reply was JSON or a stream's last frame. The real front door
// on a real HTTP server, the real metrics registry; the handlers raise each reason through its
// catalogue entry, and the call owner (over scripted calls) produces holder_gone and a streamed
// shutting_down the way a gateway does.

import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { createDemoResolver } from "../../src/auth/demoResolver.js";
import { ownerHashOf } from "../../src/auth/identity.js";
import { frontDoor } from "../../src/http/frontDoor.js";
import type { PassThrough } from "../../src/http/passThrough.js";
import type { MethodRequest } from "../../src/methods/handler.js";
import { MethodRouter } from "../../src/methods/router.js";
import { GatewayMetrics } from "../../src/observability/metrics.js";
import { RpcError } from "../../src/protocol/errors.js";
import { ALL_REASONS, REASONS, type Reason, reasonMessage } from "../../src/protocol/reasons.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { type DeskSetup, deskOf, log, toolOrder } from "../support/desk.js";
import { type RpcReply, rpc } from "../support/mcpClient.js";
import { parseMetrics } from "../support/metrics.js";
import { formQuestion } from "../support/scriptedCall.js";
import { eventually } from "../support/waiting.js";

/** TEST DOUBLE: the legacy door is never reached by these modern requests. */
const noLegacyDoor: PassThrough = {
  handle: () => assert.fail("no legacy request is sent"),
  isKnownSession: () => false,
  close: async () => undefined,
};

describe("every catalogued reason is counted under that reason", () => {
  const metrics = new GatewayMetrics();
  let server: Server;
  let url: string;
  let desk: DeskSetup;
  let gone: DeskSetup;

  before(async () => {
    desk = await deskOf({ instanceId: "here" });
    gone = await deskOf({ instanceId: "gone" });
    const raise = async (request: MethodRequest) => {
      const reason = request.params.cursor as Reason;
      const entry = REASONS[reason];
      throw new RpcError(entry.code, reasonMessage(reason), { reason }, entry.httpStatus);
    };
    /** Opens the call at `on` (prompts/get: at the instance its params name, so a retry can reach the other one). */
    const call = (on: (request: MethodRequest) => DeskSetup) => (request: MethodRequest) =>
      on(request).desk.open(request, {
        ...toolOrder(request.params.name as string, "never"),
        method: request.method,
        owner: ownerHashOf(request.identity),
      });
    const router = new MethodRouter(
      {
        "tools/list": raise,
        "tools/call": call(() => desk),
        "prompts/get": call((request) => (request.params.via === "gone" ? gone : desk)),
      },
      async () => ({ tools: {}, prompts: {} }),
    );
    const door = frontDoor({
      identity: createDemoResolver(),
      requiredScopes: [],
      router,
      passThrough: noLegacyDoor,
      legacy: { enabled: true, authenticate: false },
      log,
      allowedOrigins: [],
      allowedHosts: ["127.0.0.1"],
      bodyLimitBytes: 1_000_000,
      keepAliveMs: 10_000,
      metrics,
    });
    server = createServer((req, res) => void door(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const counts = async () => parseMetrics(await metrics.text());
  const replies = (scrape: Awaited<ReturnType<typeof counts>>, reason: string) => scrape.value("taskgate_error_replies_total", { reason });
  const requests = (scrape: Awaited<ReturnType<typeof counts>>, method: string, outcome: string) =>
    scrape.find("taskgate_requests_total", { method, outcome }) ?? 0;

  /** The request's metrics once its response ended (the front door counts it right after). */
  async function countedAfter(send: () => Promise<RpcReply>, reason: Reason) {
    const before = await counts();
    const reply = await send();
    await eventually(async () => replies(await counts(), reason) > replies(before, reason), `${reason} was counted`);
    return { before, after: await counts(), reply };
  }

  it("each reason's series exists at 0 before anything happened", async () => {
    const scrape = await counts();
    for (const reason of ALL_REASONS) assert.equal(replies(scrape, reason), 0, reason);
  });

  for (const reason of ALL_REASONS) {
    it(`${reason}: a JSON error reply naming it counts under ${reason} and outcome ${REASONS[reason].outcome}`, async () => {
      const { before, after, reply } = await countedAfter(() => rpc(url, "tools/list", { cursor: reason }), reason);
      assert.equal(reply.status, REASONS[reason].httpStatus);
      assert.equal((reply.message.error as { data: JsonObject }).data.reason, reason);
      assert.equal(replies(after, reason), replies(before, reason) + 1);
      const outcome = REASONS[reason].outcome;
      assert.equal(requests(after, "tools/list", outcome), requests(before, "tools/list", outcome) + 1);
    });
  }

  it("holder_gone from the call owner (a retry whose holder instance is gone) counts as an error, never ok", async () => {
    const capabilities = { elicitation: {} };
    const asked = rpc(url, "prompts/get", { name: "ask", via: "gone" }, { capabilities });
    await eventually(() => gone.calls.length === 1, "the call started on the instance that goes away");
    gone.calls[0]!.ask(formQuestion("name"));
    const round = (await asked).message.result as JsonObject;
    assert.equal(round.resultType, "input_required");
    const retry = { name: "ask", via: "here", requestState: round.requestState, inputResponses: {} };
    const { before, after, reply } = await countedAfter(() => rpc(url, "prompts/get", retry, { capabilities }), "holder_gone");
    assert.equal((reply.message.error as { data: JsonObject }).data.reason, "holder_gone");
    assert.equal(requests(after, "prompts/get", "error"), requests(before, "prompts/get", "error") + 1);
    assert.equal(requests(after, "prompts/get", "ok"), requests(before, "prompts/get", "ok"), "not counted as ok");
  });

  it("shutting_down as a stream's last frame (an inline call drained at shutdown) counts under shutting_down, outcome failed", async () => {
    const streaming = rpc(url, "tools/call", { name: "long" }, { meta: { progressToken: "p" } });
    await eventually(() => desk.calls.length === 1, "the inline call started");
    desk.calls[0]?.progress({ progress: 1 });
    await eventually(() => desk.desk.held().inline === 1, "the call answers inline");
    const { before, after, reply } = await countedAfter(async () => {
      // The progress notification came first: the reply is a stream, its last frame the shutdown's error.
      await desk.desk.shutdown(0);
      return streaming;
    }, "shutting_down");
    assert.equal(reply.status, 200);
    assert.match(reply.contentType, /text\/event-stream/);
    assert.equal((reply.message.error as { data: JsonObject }).data.reason, "shutting_down");
    assert.equal(requests(after, "tools/call", "failed"), requests(before, "tools/call", "failed") + 1);
  });
});
