// An MRTR requestState answers only on the fleet endpoint that issued it, like a task id. A fleet of
// two example legacy servers (`ops`, `ops2`) and the federated endpoint at /mcp, from a configuration
// file (real HTTP), one mrtr.secret for every backend (so only the endpoint tells the states apart):
// a requestState issued on /mcp is refused on /mcp/ops for the same caller, tool and arguments, one
// issued on /mcp/ops is refused on /mcp and on /mcp/ops2 — each with -32602, as another identity's
// state is — and every refusal leaves the held call to finish on its own endpoint.
// Run: node --import tsx --test test/e2e/fleetRequestState.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { type FleetFromFile, startFleetFromFile } from "../support/fleetFromFile.js";
import { errorOf, type RpcReply } from "../support/mcpClient.js";
import { expectComplete, expectInputRequired, type Round, textOf } from "../support/realServerCalls.js";
import { callTool } from "../support/tasks.js";

const FORMS = { elicitation: { form: {} } };
const NAMES: Record<string, string> = { first: "Ada", last: "Lovelace" };
const accept = (key: string) => ({ [key]: { action: "accept", content: { [key]: NAMES[key] ?? "" } } });

describe("a fleet's requestState answers only on the endpoint that issued it", () => {
  let legacy: LegacyServer;
  let fleet: FleetFromFile;
  let base: string;
  const ask = (path: string, tool: string, who = "alice", params: JsonObject = {}): Promise<RpcReply> =>
    callTool(`${base}${path}`, tool, {}, { token: who, capabilities: FORMS }, params);
  const retry = (path: string, tool: string, round: Round, who = "alice") =>
    ask(path, tool, who, { requestState: round.requestState, inputResponses: accept(round.key) });
  const refused = (reply: RpcReply, pattern: RegExp) => {
    assert.equal(reply.status, 200, JSON.stringify(reply.message));
    const error = errorOf(reply);
    assert.ok(error, JSON.stringify(reply.message));
    assert.equal(error.code, -32602, JSON.stringify(error));
    assert.match(error.message, pattern);
  };

  before(async () => {
    legacy = await startLegacyServer({ port: 0, speed: 20 });
    const backend = { url: legacy.url };
    fleet = await startFleetFromFile(
      "fleet-request-state",
      "reload: { watchFile: false }\nfederation: { path: /mcp }\nmrtr: { secret: one-secret-shared-by-every-backend-of-this-fleet }\n" +
        `backends: ${JSON.stringify({ ops: backend, ops2: backend })}\n`,
    );
    ({ base } = fleet);
  });
  after(async () => {
    await fleet?.close();
    await legacy?.close();
  });

  test("issued on /mcp: refused on /mcp/ops (same caller, tool, arguments), then finished on /mcp", async () => {
    const round = expectInputRequired(await ask("/mcp", "ops__two_rounds"));
    refused(await retry("/mcp/ops", "two_rounds", round), /another endpoint.*path that issued it/);
    // The foreign identity's refusal on the right endpoint has the same code.
    refused(await retry("/mcp", "ops__two_rounds", round, "bob"), /another identity/);
    const second = expectInputRequired(await retry("/mcp", "ops__two_rounds", round));
    assert.equal(textOf(expectComplete(await retry("/mcp", "ops__two_rounds", second))), "Hello, Ada Lovelace!");
  });

  test("issued on /mcp/ops: refused on /mcp and on /mcp/ops2, then finished on /mcp/ops", async () => {
    const round = expectInputRequired(await ask("/mcp/ops", "two_rounds"));
    refused(await retry("/mcp", "ops__two_rounds", round), /another endpoint/);
    refused(await retry("/mcp/ops2", "two_rounds", round), /another endpoint/);
    const second = expectInputRequired(await retry("/mcp/ops", "two_rounds", round));
    assert.equal(textOf(expectComplete(await retry("/mcp/ops", "two_rounds", second))), "Hello, Ada Lovelace!");
  });
});
