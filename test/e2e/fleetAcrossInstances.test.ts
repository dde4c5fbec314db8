// A fleet run as two instances sharing one store — a real Redis (the test file's own redis-server, a
// fresh key prefix), then a real PostgreSQL (a fresh database) — and one mrtr.secret, in front of
// two real example legacy servers (backends `legacy` and `other`, and the federated endpoint at
// /all). An inline call's first round is answered by A; its
// retry reaches B, which sends it to A (the holder); under policy auto the answered call becomes a
// task on A. That task must answer only on the path the retry came to — a backend's own path or the
// federated endpoint — on either instance, and be unknown (-32602) on every other path.
// Run: node --import tsx --test test/e2e/fleetAcrossInstances.test.ts

import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import { ConfigSchema } from "../../src/config/schema.js";
import { type Gateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/observability/logger.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { LogCapture } from "../support/logCapture.js";
import { errorOf, resultOf } from "../support/mcpClient.js";
import { freshDatabase, POSTGRES_SKIP } from "../support/postgres.js";
import { needsRedis, testRedisUrl } from "../support/redisServer.js";
import { health } from "../support/stack.js";
import { callTool, hasStatus, TASKS_AND_FORMS, taskRpc, waitForTask } from "../support/tasks.js";

const SECRET = randomBytes(32).toString("hex");
const accept = (content: JsonObject) => ({ action: "accept", content });

const STORES = [
  {
    kind: "redis",
    skip: needsRedis,
    store: async () => ({ kind: "redis", url: await testRedisUrl(), prefix: `taskgate-test-${randomUUID()}` }),
  },
  {
    kind: "postgres",
    skip: POSTGRES_SKIP ? { skip: POSTGRES_SKIP } : {},
    store: async () => ({ kind: "postgres", url: await freshDatabase() }),
  },
] as const;

for (const { kind, skip, store } of STORES)
  describe(`a fleet on two instances (${kind}): a retry that becomes a task on the holder keeps its endpoint`, skip, () => {
    let legacy: LegacyServer;
    let other: LegacyServer;
    let a: Gateway;
    let b: Gateway;
    const logs = new LogCapture();
    const at = (gateway: Gateway, path: string) => `http://127.0.0.1:${gateway.port}${path}`;

    before(async () => {
      const shared = { ...(await store()), leaseMs: 3_000 };
      [legacy, other] = await Promise.all([startLegacyServer({ port: 0, speed: 1 }), startLegacyServer({ port: 0, speed: 1 })]);
      const start = () =>
        startGateway(
          ConfigSchema.parse({
            port: 0,
            auth: { mode: "demo" },
            shutdown: { graceMs: 0 },
            mrtr: { secret: SECRET },
            store: shared,
            tasks: { tools: { ask_then_work: "auto" } },
            backends: { legacy: { url: legacy.url }, other: { url: other.url } },
            federation: { path: "/all" },
            reload: { watchFile: false },
          }),
          { log: createLogger("info", logs) },
        );
      a = await start();
      b = await start();
    });

    after(async () => {
      await a?.close();
      await b?.close();
      await Promise.all([legacy?.close(), other?.close()]);
    });

    /** Round 1 on A at `path`, the answer's retry on B at the same path: the task's id. */
    async function taskThroughB(path: string, tool: string): Promise<string> {
      const first = resultOf(await callTool(at(a, path), tool, { ms: 300 }, { capabilities: TASKS_AND_FORMS }));
      assert.equal(first.resultType, "input_required", JSON.stringify(first));
      const created = resultOf(
        await callTool(
          at(b, path),
          tool,
          { ms: 300 },
          { capabilities: TASKS_AND_FORMS },
          { requestState: first.requestState, inputResponses: { name: accept({ name: "Alice" }) } },
        ),
      );
      assert.equal(created.resultType, "task", JSON.stringify(created));
      return created.taskId as string;
    }

    async function answersOnlyOn(taskId: string, path: string): Promise<void> {
      for (const gateway of [a, b]) {
        const done = await waitForTask(at(gateway, path), taskId, hasStatus("completed", "failed"), { timeoutMs: 10_000 });
        assert.equal(done.status, "completed", JSON.stringify(done));
        assert.match(JSON.stringify(done.result), /Hello, Alice!/);
      }
      for (const elsewhere of ["/all", "/mcp/legacy", "/mcp/other"].filter((p) => p !== path)) {
        for (const gateway of [a, b]) {
          const reply = await taskRpc(at(gateway, elsewhere), "tasks/get", { taskId });
          assert.equal(errorOf(reply)?.code, -32602, `${elsewhere} on ${gateway === a ? "A" : "B"}: ${JSON.stringify(reply.message)}`);
        }
      }
    }

    test("on a backend's own path: the task A holds answers at /mcp/legacy on both instances, nowhere else", async () => {
      const taskId = await taskThroughB("/mcp/legacy", "ask_then_work");
      assert.equal((await health(a.url)).heldTasks, 1, "the task runs where the call is: on A");
      await answersOnlyOn(taskId, "/mcp/legacy");
    });

    test("on the federated endpoint: the task answers at /all on both instances, not on the backend's own path", async () => {
      const taskId = await taskThroughB("/all", "legacy__ask_then_work");
      await answersOnlyOn(taskId, "/all");
    });

    test("each instance's start line and url name the federated endpoint", () => {
      const started = logs.lines.filter((line) => line.event === "gateway.started").map((line) => line.url);
      assert.deepEqual(started, [at(a, "/all"), at(b, "/all")]);
      assert.equal(a.url, at(a, "/all"));
    });
  });
