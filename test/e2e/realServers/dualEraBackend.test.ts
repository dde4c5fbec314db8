// A server that serves both eras at once (the v2 SDK's default: 2026-07-28, and 2025-era clients
// through its stateless fallback), behind taskgate with upstream.protocol auto: 2026-07-28 is
// preferred (relayed, the server's own MRTR round passes through); with upstream.protocol legacy
// the same server is spoken to in its old era, through sessions (taskgate's own requestState).

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Gateway } from "../../../src/gateway.js";
import type { JsonObject } from "../../../src/protocol/wire.js";
import { startGatewayInFront } from "../../support/gatewayInFront.js";
import { resultOf } from "../../support/mcpClient.js";
import { call, callTool, expectComplete, textOf } from "../../support/realServerCalls.js";
import type { ServerProcess } from "../../support/servers/serverProcess.js";
import { startThirdPartyServer } from "../../support/servers/thirdParty.js";

const ALICE = { token: "alice", capabilities: { elicitation: {} } };

describe("a dual-era server (v2 SDK, legacy: stateless)", () => {
  let server: ServerProcess;
  const gateways: Gateway[] = [];

  before(async () => {
    server = await startThirdPartyServer("modernDualEra");
  });
  after(async () => {
    for (const gateway of gateways) await gateway.close();
    await server?.stop();
  });

  it("serves the session protocol too (initialize answers 2025-11-25)", async () => {
    const response = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "probe", version: "1" } },
      }),
    });
    assert.equal(response.status, 200);
    assert.match(await response.text(), /"protocolVersion":"2025-11-25"/);
  });

  it("is spoken to in 2026-07-28 when taskgate may choose (auto)", async () => {
    const gateway = await startGatewayInFront(server.url, { upstream: { subjectHeader: "X-User" } });
    gateways.push(gateway);
    const discover = expectComplete(await call(gateway.url, "server/discover"));
    assert.equal(((discover._meta as JsonObject)["dev.taskgate/backend"] as JsonObject).era, "modern");
    const round = resultOf(await callTool(gateway.url, "ask_name", {}, ALICE));
    assert.match(String(round.requestState), /^rs\./, "the server's own MRTR round, relayed (its state sealed for the caller)");
  });

  it("is spoken to in its old era when configured legacy: a session, taskgate's own MRTR round", async () => {
    const gateway = await startGatewayInFront(server.url, { upstream: { subjectHeader: "X-User", protocol: "legacy" } });
    gateways.push(gateway);
    const discover = expectComplete(await call(gateway.url, "server/discover"));
    assert.equal(((discover._meta as JsonObject)["dev.taskgate/backend"] as JsonObject).era, "legacy");
    const greeted = expectComplete(await callTool(gateway.url, "greet", { name: "Ada" }, ALICE));
    assert.equal(textOf(greeted), "Hello, Ada! (as alice)");
  });
});
