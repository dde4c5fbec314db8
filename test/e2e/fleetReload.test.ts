// Reload without a restart: a fleet started from a configuration file (two example legacy servers,
// real HTTP). Rewriting the file adds a backend while a task runs on another, and that task
// completes; a file that does not validate is refused as a whole and the running backends stay;
// an option a reload cannot apply is refused naming it; SIGHUP reloads too; a removed backend's
// running task gets reload.drainMs, then fails with reason backend_removed, and stays readable.
// Run: node --import tsx --test test/e2e/fleetReload.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import type { Gateway } from "../../src/gateway.js";
import { type FleetFromFile, startFleetFromFile } from "../support/fleetFromFile.js";
import { errorOf, resultOf, rpc } from "../support/mcpClient.js";
import { callTool, createTask, getTask, pollTask } from "../support/tasks.js";
import { until } from "../support/waiting.js";

interface Backends {
  [name: string]: { url: string; tasks?: { tools: Record<string, string> } };
}

describe("a fleet reloads its configuration file", () => {
  let first: LegacyServer;
  let second: LegacyServer;
  let fleet: FleetFromFile;
  let gateway: Gateway;
  let base: string;
  const fileOf = (backends: Backends, extra = "") => `reload: { drainMs: 300 }\nbackends: ${JSON.stringify(backends)}\n${extra}`;
  const write = (backends: Backends, extra = "") => fleet.write(fileOf(backends, extra));
  const slowTasks = { tools: { slow_echo: "always" } };
  const greets = async (name: string) => resultOf(await rpc(`${base}/mcp/${name}`, "tools/call", { name: "greet", arguments: { name } }));

  before(async () => {
    [first, second] = await Promise.all([startLegacyServer({ port: 0, speed: 20 }), startLegacyServer({ port: 0, speed: 20 })]);
    fleet = await startFleetFromFile("reload", fileOf({ first: { url: first.url, tasks: slowTasks } }));
    ({ gateway, base } = fleet);
  });
  after(async () => {
    await fleet?.close();
    await Promise.all([first?.close(), second?.close()]);
  });

  test("a changed file adds a backend while a task runs on another; that task completes", async () => {
    const task = await createTask(`${base}/mcp/first`, "slow_echo", { text: "kept", ms: 1_500 });
    write({ first: { url: first.url, tasks: slowTasks }, second: { url: second.url } });
    // Until then /mcp/second is no endpoint (an HTML 404 from the side doors).
    await until(10_000, "the watched file's change adds backend 'second'", () => greets("second"));
    assert.match(JSON.stringify(await greets("second")), /Hello, second!/);
    const done = await pollTask(`${base}/mcp/first`, task.taskId as string, (t) => t.status !== "working");
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.match(JSON.stringify(done.result), /kept/);
  });

  test("a file that does not validate is refused as a whole; the running backends stay", async () => {
    write({ first: { url: first.url, tasks: slowTasks }, Second: { url: second.url } });
    const refused = (await gateway.reload?.()) as { refused?: string };
    assert.match(refused.refused ?? "", /backends\.Second: 'Second' is not a backend name/);
    write({ first: { url: first.url, tasks: slowTasks, colour: "blue" } as never, second: { url: second.url } });
    const unknownKey = (await gateway.reload?.()) as { refused?: string };
    assert.match(unknownKey.refused ?? "", /backends\.first\.colour: unknown option/);
    assert.match(JSON.stringify(await greets("first")), /Hello, first!/);
    assert.match(JSON.stringify(await greets("second")), /Hello, second!/);
  });

  test("an option a reload cannot apply is refused, naming it", async () => {
    write({ first: { url: first.url, tasks: slowTasks }, second: { url: second.url } }, "bodyLimitBytes: 4096\n");
    const refused = (await gateway.reload?.()) as { refused?: string };
    assert.match(refused.refused ?? "", /need a restart, not a reload: bodyLimitBytes/);
  });

  test("SIGHUP reloads; a removed backend's running task gets drainMs, then fails with backend_removed and stays readable", async () => {
    const task = await createTask(`${base}/mcp/first`, "slow_echo", { text: "cut short", ms: 30_000 });
    write({ second: { url: second.url } });
    process.emit("SIGHUP", "SIGHUP");
    const refusedNew = await callTool(`${base}/mcp/first`, "greet", { name: "late" });
    const failed = await pollTask(`${base}/mcp/first`, task.taskId as string, (t) => t.status !== "working", { timeoutMs: 10_000 });
    assert.equal(failed.status, "failed", JSON.stringify(failed));
    assert.equal((failed.error as { data?: { reason?: string } }).data?.reason, "backend_removed");
    assert.match(failed.statusMessage as string, /backend 'first' was removed/);
    // New work on the removed backend was refused at once, naming why.
    assert.equal(errorOf(refusedNew)?.data?.reason, "backend_removed", JSON.stringify(refusedNew.message));
    assert.match(errorOf(refusedNew)?.message ?? "", /^backend 'first' was removed from the configuration: it takes no new calls/);
    assert.equal(refusedNew.status, 503);
    await getTask(`${base}/mcp/first`, task.taskId as string);
    assert.match(JSON.stringify(await greets("second")), /Hello, second!/);
  });
});
