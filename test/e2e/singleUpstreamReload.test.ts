// A single upstream reloads its access rules and approvals: taskgate started from a configuration
// file (`upstream` + `access`, the real example legacy server). Rewriting the file to let bob see
// the slow tools applies on reload, in place: alice's task started before goes on and completes.
// A change to anything else (here the upstream itself) is refused naming it, and the running rules
// stay. SIGHUP reloads too.
// Run: node --import tsx --test test/e2e/singleUpstreamReload.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import type { Gateway } from "../../src/gateway.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { type FleetFromFile, startFleetFromFile } from "../support/fleetFromFile.js";
import { errorOf, resultOf, rpc } from "../support/mcpClient.js";
import { createTask, pollTask } from "../support/tasks.js";
import { until } from "../support/waiting.js";

describe("a single upstream reloads its access rules and approvals", () => {
  let legacy: LegacyServer;
  let other: LegacyServer;
  let started: FleetFromFile;
  let gateway: Gateway;
  let url: string;
  const denyBob = { rules: [{ subjects: ["bob"], deny: { tools: ["slow_*"] } }] };
  const fileOf = (access: JsonObject, upstreamUrl = legacy.url) =>
    `reload: { watchFile: false }\ntasks: { tools: { slow_echo: always } }\n` +
    `upstream: ${JSON.stringify({ url: upstreamUrl })}\naccess: ${JSON.stringify(access)}\n`;
  const names = async (token: string) =>
    ((resultOf(await rpc(url, "tools/list", {}, { token })).tools as JsonObject[]) ?? []).map((tool) => tool.name as string);

  before(async () => {
    [legacy, other] = await Promise.all([startLegacyServer({ port: 0, speed: 20 }), startLegacyServer({ port: 0, speed: 20 })]);
    started = await startFleetFromFile("single-reload", fileOf(denyBob));
    gateway = started.gateway;
    url = `${started.base}/mcp`;
  });
  after(async () => {
    await started?.close();
    await Promise.all([legacy?.close(), other?.close()]);
  });

  test("new rules apply in place; a task started before goes on", async () => {
    assert.ok(!(await names("bob")).includes("slow_echo"), "bob does not see slow_echo");
    const hidden = await rpc(url, "tools/call", { name: "slow_echo", arguments: { text: "x" } }, { token: "bob" });
    assert.equal(errorOf(hidden).code, -32602);
    const task = await createTask(url, "slow_echo", { text: "kept", ms: 2_000 }, { token: "alice" });

    started.write(fileOf({}));
    const result = (await gateway.reload?.()) as { applied?: { policyChanged: string[]; needsRestart: string[] } };
    assert.deepEqual(result.applied?.policyChanged, ["upstream"], JSON.stringify(result));
    assert.ok((await names("bob")).includes("slow_echo"), "bob sees slow_echo now");
    const done = await pollTask(url, task.taskId as string, (t) => t.status !== "working", { token: "alice" });
    assert.equal(done.status, "completed", JSON.stringify(done));
  });

  test("a change a reload cannot apply is refused naming it; the running rules stay", async () => {
    started.write(fileOf(denyBob, other.url));
    const refused = (await gateway.reload?.()) as { refused?: string };
    assert.match(refused.refused ?? "", /need a restart, not a reload: upstream \(a single upstream reloads access and approvals/);
    assert.ok((await names("bob")).includes("slow_echo"), "the rules of the last applied file stay");
  });

  test("SIGHUP reloads the file", async () => {
    started.write(fileOf(denyBob));
    process.emit("SIGHUP", "SIGHUP");
    await until(10_000, "SIGHUP applies the file's rules", async () => ((await names("bob")).includes("slow_echo") ? undefined : true));
  });
});
