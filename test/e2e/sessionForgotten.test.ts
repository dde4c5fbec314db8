// An upstream that forgets taskgate's session while a call's POST waits for its answer: the
// standalone stream hears "session gone" first, the call's own POST second. That POST was refused
// (the call never ran), so taskgate sends it again on a new session and the client gets its result,
// not upstream_lost. The upstream is a named fake (support/servers/forgetfulServer.ts): a real
// restart gives no control over which request hears of it first.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { rpcWithin } from "../support/boundedRpc.js";
import { closeAll } from "../support/closeAll.js";
import { type FaultGateway, startFaultGateway } from "../support/inProcessGateway.js";
import { ANSWER_WITHIN_MS, UPSTREAM_LIMITS } from "../support/limits.js";
import { type ForgetfulServer, startForgetfulServer } from "../support/servers/forgetfulServer.js";

let upstream: ForgetfulServer;
let gw: FaultGateway;
before(async () => {
  upstream = await startForgetfulServer();
  gw = await startFaultGateway(upstream.url, { upstream: { ...UPSTREAM_LIMITS, protocol: "legacy" } });
});
after(() =>
  closeAll(
    () => gw?.close(),
    () => upstream?.close(),
  ),
);

test("a call refused because its session was forgotten is sent again on a new session, even when the stream heard of it first", async () => {
  const reply = rpcWithin(ANSWER_WITHIN_MS, gw.url, "tools/call", { name: "echo", arguments: { text: "after" } });
  await upstream.callHeld();
  const opened = upstream.sessions();
  upstream.forget();
  const { message } = await reply;
  assert.deepEqual(
    (message.result as { content?: unknown } | undefined)?.content,
    [{ type: "text", text: "after" }],
    JSON.stringify(message),
  );
  assert.equal(upstream.sessions(), opened + 1, "one new session upstream, for the call sent again");
});
