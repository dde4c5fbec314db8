// E2E: the inventory of a fleet sits at the root and covers every backend (two backends on real
// example legacy servers, and the federated endpoint): alice's tasks of both are listed with their
// `backend`, filtered by it, and answered through POST /tasks/{id}/input whichever backend holds
// the task; the federated endpoint's task is listed too, under its backend.
// Run: node --import tsx --test test/e2e/inventoryFleet.test.ts

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import { ConfigSchema } from "../../src/config/schema.js";
import { type Gateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/observability/logger.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { api } from "../support/inventory.js";
import { createTask, hasStatus, waitForTask } from "../support/tasks.js";

describe("the inventory of a fleet", () => {
  let servers: LegacyServer[] = [];
  let gateway: Gateway;
  let base: string;

  before(async () => {
    servers = await Promise.all([startLegacyServer({ port: 0, speed: 20 }), startLegacyServer({ port: 0, speed: 20 })]);
    const config = ConfigSchema.parse({
      port: 0,
      auth: { mode: "demo" },
      shutdown: { graceMs: 0 },
      tasks: { policy: "always" },
      backends: { east: { url: servers[0]?.url }, west: { url: servers[1]?.url } },
      federation: { path: "/mcp" },
    });
    gateway = await startGateway(config, { log: createLogger(process.env.TEST_LOG_LEVEL ?? "silent") });
    base = `http://127.0.0.1:${gateway.port}`;
  });
  after(async () => {
    await gateway?.close();
    for (const server of servers) await server.close();
  });

  test("tasks of every backend, with their backend; answered wherever they are held", async () => {
    const east = await createTask(`${base}/mcp/east`, "build_report", { month: "2026-07" }, { token: "alice" });
    const west = await createTask(`${base}/mcp/west`, "build_report", { month: "2026-08" }, { token: "alice" });
    const federated = await createTask(`${base}/mcp`, "west__build_report", { month: "2026-09" }, { token: "alice" });
    await waitForTask(`${base}/mcp/east`, east.taskId as string, hasStatus("input_required"), { token: "alice" });
    await waitForTask(`${base}/mcp/west`, west.taskId as string, hasStatus("input_required"), { token: "alice" });

    const all = (await api(base, "GET", "/tasks", "alice")).body.tasks as JsonObject[];
    assert.deepEqual(
      all.map((task) => [task.taskId, task.backend]),
      [
        [federated.taskId, "west"],
        [west.taskId, "west"],
        [east.taskId, "east"],
      ],
    );
    const onlyEast = (await api(base, "GET", "/tasks?backend=east", "alice")).body.tasks as JsonObject[];
    assert.deepEqual(
      onlyEast.map((task) => task.taskId),
      [east.taskId],
    );
    for (const task of [east, west]) {
      const answered = await api(base, "POST", `/tasks/${task.taskId as string}/input`, "alice", {
        inputResponses: { charts: { action: "accept", content: { charts: true } } },
      });
      assert.equal(answered.status, 200, JSON.stringify(answered.body));
    }
    await waitForTask(`${base}/mcp/east`, east.taskId as string, hasStatus("completed"), { token: "alice" });
    await waitForTask(`${base}/mcp/west`, west.taskId as string, hasStatus("completed"), { token: "alice" });
    assert.equal((await api(base, "GET", `/tasks/${federated.taskId as string}`, "bob")).status, 404);
  });
});
