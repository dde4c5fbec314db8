// Issue 10, case 1: an upstream that restarts forgets taskgate's sessions, and many real servers
// (server-everything, the SDK 1.11-era examples) then answer HTTP 400 "Bad Request: No valid
// session ID provided" instead of 404. taskgate must treat that as "session gone": re-initialise,
// send the refused request once more, and subscribe again for open listen streams.
// The upstream is the example legacy server as a real process, restarted on the same port with
// LEGACY_UNKNOWN_SESSION_STATUS=400 (its answer is byte for byte server-everything's).

import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { COUNTER_URI } from "../../examples/legacy-server/resources.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { rpcWithin } from "../support/boundedRpc.js";
import { closeAll } from "../support/closeAll.js";
import { failIfStillRunning } from "../support/exitGuard.js";
import { type FaultGateway, startFaultGateway } from "../support/inProcessGateway.js";
import { ANSWER_WITHIN_MS, UPSTREAM_LIMITS } from "../support/limits.js";
import { openListen } from "../support/listen.js";
import { resultOf } from "../support/mcpClient.js";
import { LegacyProcess } from "../support/servers/legacyProcess.js";
import { until } from "../support/waiting.js";

failIfStillRunning();

const textOf = (result: JsonObject) => (result.content as Array<{ text: string }>)[0]?.text;
const isUpdate = (frame: JsonObject) => frame.method === "notifications/resources/updated";

describe("an upstream restarted under taskgate, answering 400 'No valid session ID provided' for the old sessions", () => {
  let legacy: LegacyProcess;
  let gw: FaultGateway;
  beforeEach(async () => {
    legacy = await LegacyProcess.start({ unknownSessionStatus: 400 });
    gw = await startFaultGateway(legacy.url, { upstream: { ...UPSTREAM_LIMITS } });
  });
  afterEach(() =>
    closeAll(
      () => gw?.close(),
      () => legacy?.close(),
    ),
  );

  test("the first request after the restart re-initialises the session and succeeds; the refused call runs exactly once", async () => {
    const before = await rpcWithin(ANSWER_WITHIN_MS, gw.url, "tools/call", { name: "greet", arguments: { name: "before" } });
    assert.equal(textOf(resultOf(before)), "Hello, before!", JSON.stringify(before.message));

    await legacy.kill();
    await legacy.restart();
    let greetsStarted = 0;
    legacy.events.on("tool-started", (e: { tool: string }) => {
      if (e.tool === "greet") greetsStarted += 1;
    });

    const after = await rpcWithin(ANSWER_WITHIN_MS, gw.url, "tools/call", { name: "greet", arguments: { name: "after" } });
    assert.equal(after.status, 200);
    assert.ok(after.message.result, `the first call after the restart must succeed, got ${JSON.stringify(after.message)}`);
    assert.equal(textOf(resultOf(after)), "Hello, after!");
    await until(5_000, "the restarted upstream reports the greet it ran", () => (greetsStarted >= 1 ? true : undefined));
    // An absence cannot be awaited: a duplicate send would be reported within this window.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(greetsStarted, 1, "the refused greet never ran on the dead session, so it is sent exactly once more");

    for (const method of ["tools/list", "server/discover"]) {
      const reply = await rpcWithin(ANSWER_WITHIN_MS, gw.url, method, {});
      assert.ok(reply.message.result, `${method} after the restart: ${JSON.stringify(reply.message)}`);
    }
  });

  test("an open subscriptions/listen stream keeps receiving resources/updated for its subscription after the restart", async () => {
    const stream = await openListen(gw.url, { resourceSubscriptions: [COUNTER_URI] });
    try {
      await stream.waitFor(() => true, ANSWER_WITHIN_MS, "the listen acknowledgement");
      await rpcWithin(ANSWER_WITHIN_MS, gw.url, "tools/call", { name: "touch_resource", arguments: {} });
      await stream.waitFor(isUpdate, ANSWER_WITHIN_MS, "resources/updated before the restart");
      const updatesBefore = stream.frames.filter(isUpdate).length;

      await legacy.kill();
      await legacy.restart();

      // Touch the counter until the stream hears of it: the subscription may be renewed just
      // after the first request that re-initialises the session.
      let lastReply = "";
      await until(
        ANSWER_WITHIN_MS,
        "resources/updated on the same listen stream after the upstream restarted",
        async () => {
          const touch = await rpcWithin(ANSWER_WITHIN_MS, gw.url, "tools/call", { name: "touch_resource", arguments: {} });
          lastReply = JSON.stringify(touch.message).slice(0, 300);
          const fresh = (frame: JsonObject) => isUpdate(frame) && stream.frames.filter(isUpdate).indexOf(frame) >= updatesBefore;
          return stream.waitFor(fresh, 300, "a fresh resources/updated").then(
            () => true,
            () => undefined,
          );
        },
        300,
      ).catch((error: Error) => {
        throw new Error(`${error.message}; last touch_resource reply: ${lastReply}`);
      });
      assert.equal(stream.isEnded(), false, "the listen stream stayed open across the restart");
      const update = stream.frames.filter(isUpdate).at(-1)!;
      assert.equal((update.params as JsonObject).uri, COUNTER_URI);
    } finally {
      stream.close();
    }
  });
});
