// The federated endpoint acknowledges resourceSubscriptions as a backend's own path does. A fleet of
// the example legacy server (`ops`, which offers resources.subscribe) with the federated endpoint at
// /mcp, from a configuration file (real HTTP): a listen asking `resourceSubscriptions: []` alone is
// acknowledged with `resourceSubscriptions: []` on both paths, and one asking only URIs no backend
// lists gets `[]` on /mcp — the honoured subset, present because subscriptions are offered.
// Run: node --import tsx --test test/e2e/fleetListenAcknowledgement.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { type FleetFromFile, startFleetFromFile } from "../support/fleetFromFile.js";
import { openListen, paramsOf } from "../support/listen.js";

describe("a fleet's federated listen acknowledges resourceSubscriptions as a backend's path does", () => {
  let legacy: LegacyServer;
  let fleet: FleetFromFile;

  before(async () => {
    legacy = await startLegacyServer({ port: 0, speed: 20 });
    fleet = await startFleetFromFile(
      "fleet-listen-ack",
      `reload: { watchFile: false }\nfederation: { path: /mcp }\nbackends: ${JSON.stringify({ ops: { url: legacy.url } })}\n`,
    );
  });
  after(async () => {
    await fleet?.close();
    await legacy?.close();
  });

  const acknowledged = async (path: string, notifications: JsonObject): Promise<JsonObject> => {
    const listen = await openListen(`${fleet.base}${path}`, notifications, { token: "alice", capabilities: {} });
    try {
      const ack = await listen.waitFor(() => true, 10_000, `the acknowledgement on ${path}`);
      assert.equal(ack.method, "notifications/subscriptions/acknowledged", JSON.stringify(ack));
      return paramsOf(ack).notifications as JsonObject;
    } finally {
      listen.close();
    }
  };

  test("resourceSubscriptions: [] alone is acknowledged with [] on /mcp/ops and on /mcp", async () => {
    const own = await acknowledged("/mcp/ops", { resourceSubscriptions: [] });
    assert.deepEqual(own, { resourceSubscriptions: [] }, "the backend's own path");
    assert.deepEqual(await acknowledged("/mcp", { resourceSubscriptions: [] }), own, "the federated endpoint agrees");
  });

  test("on /mcp, only URIs no backend lists: the field is there, with none of them", async () => {
    // (On the backend's own path such a URI is the server's to decide: docs/decisions/0032.)
    assert.deepEqual(await acknowledged("/mcp", { resourceSubscriptions: ["nobody://listed"] }), { resourceSubscriptions: [] });
  });
});
