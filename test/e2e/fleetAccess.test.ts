// Access rules in a fleet started from a configuration file (one example legacy server as backend
// `ops`, the federated endpoint at /mcp; real HTTP). Bob's lists lack what the backend's rules deny
// him, on the backend's own path and in the federated catalog, and his call of a hidden tool
// answers there exactly like an unknown one. A reload that changes only access applies in place:
// bob sees the tool at once, and a task he started before access was withdrawn runs to its end
// (docs/decisions/0024) while his new calls are refused.
// Run: node --import tsx --test test/e2e/fleetAccess.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import type { Gateway } from "../../src/gateway.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { type FleetFromFile, startFleetFromFile } from "../support/fleetFromFile.js";
import { errorOf, resultOf, rpc } from "../support/mcpClient.js";
import { callTool, createTask, pollTask } from "../support/tasks.js";

describe("access rules in a fleet, on the backend's path and the federated endpoint, and on reload", () => {
  let legacy: LegacyServer;
  let fleet: FleetFromFile;
  let gateway: Gateway;
  let base: string;
  const fileOf = (access: JsonObject) =>
    "reload: { watchFile: false }\nfederation: { path: /mcp }\n" +
    `backends: ${JSON.stringify({ ops: { url: legacy.url, tasks: { tools: { slow_echo: "always" } }, access } })}\n`;
  const write = (access: JsonObject) => fleet.write(fileOf(access));
  const denyBob = { rules: [{ subjects: ["bob"], deny: { tools: ["slow_*"] } }] };
  const names = async (url: string, token: string) =>
    ((resultOf(await rpc(url, "tools/list", {}, { token })).tools as JsonObject[]) ?? []).map((tool) => tool.name as string);

  before(async () => {
    legacy = await startLegacyServer({ port: 0, speed: 20 });
    fleet = await startFleetFromFile("fleet-access", fileOf(denyBob));
    ({ gateway, base } = fleet);
  });
  after(async () => {
    await fleet?.close();
    await legacy?.close();
  });

  test("bob's lists lack the denied tools on the backend's path and in the federated catalog; calls answer as unknown", async () => {
    assert.ok((await names(`${base}/mcp/ops`, "alice")).includes("slow_echo"));
    assert.ok(!(await names(`${base}/mcp/ops`, "bob")).includes("slow_echo"));
    assert.ok((await names(`${base}/mcp`, "alice")).includes("ops__slow_echo"));
    const federated = await names(`${base}/mcp`, "bob");
    assert.ok(!federated.includes("ops__slow_echo") && federated.includes("ops__greet"), JSON.stringify(federated));

    for (const [url, hidden, unknown] of [
      [`${base}/mcp/ops`, "slow_echo", "no_such_tool"],
      [`${base}/mcp`, "ops__slow_echo", "ops__no_such_tool"],
    ] as const) {
      const asHidden = await callTool(url, hidden, { text: "x" }, { token: "bob" });
      const asUnknown = await callTool(url, unknown, { text: "x" }, { token: "bob" });
      assert.equal(asHidden.status, asUnknown.status);
      const expected = errorOf(asUnknown);
      assert.ok(expected, JSON.stringify(asUnknown.message));
      const own = (name: string) => name.replace(/^ops__/, "");
      assert.deepEqual(errorOf(asHidden), { ...expected, message: expected.message.replace(own(unknown), own(hidden)) }, url);
    }
  });

  test("a reload that changes only access applies in place; a task started before access was withdrawn runs to its end", async () => {
    write({});
    const opened = (await gateway.reload?.()) as { applied?: { policyChanged: string[]; changed: string[] } };
    assert.deepEqual(opened.applied?.policyChanged, ["ops"], JSON.stringify(opened));
    assert.deepEqual(opened.applied?.changed, [], "the backend is not reopened");
    assert.ok((await names(`${base}/mcp`, "bob")).includes("ops__slow_echo"), "bob sees the tool now");

    const task = await createTask(`${base}/mcp/ops`, "slow_echo", { text: "started while allowed", ms: 1_500 }, { token: "bob" });
    write(denyBob);
    const withdrawn = (await gateway.reload?.()) as { applied?: { policyChanged: string[] } };
    assert.deepEqual(withdrawn.applied?.policyChanged, ["ops"]);
    assert.equal(errorOf(await callTool(`${base}/mcp/ops`, "slow_echo", { text: "new" }, { token: "bob" }))?.code, -32602);
    const done = await pollTask(`${base}/mcp/ops`, task.taskId as string, (t) => t.status !== "working", { token: "bob" });
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.match(JSON.stringify(done.result), /started while allowed/);
  });
});
