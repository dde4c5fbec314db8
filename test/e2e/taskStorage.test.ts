// E2E: the file task store. A finished task outlives its gateway (a new gateway on the same file
// still serves it); a gateway that shuts down fails the tasks it held, saying why; and the real
// restart: the CLI (src/cli.ts) as a child process is SIGKILLed while a task is working, and
// the next process on the same file reports that task as failed because the gateway restarted.
// Run: node --import tsx --test test/e2e/taskStorage.test.ts

import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { killHard, spawnGateway as spawnChild } from "../support/gatewayChild.js";
import { type Stack, startStack } from "../support/stack.js";
import { textOf } from "../support/taskShapes.js";
import { assertRpcError, createTask, getTask, hasStatus, TERMINAL, taskRpc, waitForTask } from "../support/tasks.js";

const SPEED = 20;
const idOf = (task: JsonObject) => task.taskId as string;

const tempDirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "taskgate-storage-"));
  tempDirs.push(dir);
  return dir;
}

const stacks: Stack[] = [];
async function fileStack(path: string): Promise<Stack> {
  const s = await startStack({ speed: SPEED, config: { store: { kind: "file", path }, tasks: { policy: "always" } } });
  stacks.push(s);
  return s;
}
async function closeStack(s: Stack): Promise<void> {
  stacks.splice(stacks.indexOf(s), 1);
  await s.close();
}

after(async () => {
  for (const s of stacks.splice(0)) await s.close().catch(() => undefined);
  for (const dir of tempDirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe("file store across gateway instances (in process)", () => {
  test("a finished task is still readable after the gateway closed and a new one started on the same file", async () => {
    const file = join(await tempDir(), "tasks.json");
    const first = await fileStack(file);
    const task = await createTask(first.url, "greet", { name: "Durable" });
    const done = await waitForTask(first.url, idOf(task), TERMINAL);
    assert.equal(done.status, "completed");
    const failedTask = await createTask(first.url, "broken_tool");
    const failed = await waitForTask(first.url, idOf(failedTask), TERMINAL);
    assert.equal(failed.status, "failed");
    await closeStack(first);

    const second = await fileStack(file);
    assert.deepEqual(await getTask(second.url, idOf(task)), done);
    assert.equal(textOf((await getTask(second.url, idOf(task))).result), "Hello, Durable!");
    assert.deepEqual(await getTask(second.url, idOf(failedTask)), failed);
    // Ownership survives the restart too.
    assertRpcError(await taskRpc(second.url, "tasks/get", { taskId: idOf(task) }, "bob"), -32602);
  });

  test("closing a gateway fails the tasks it held, and the next gateway says why", async () => {
    const file = join(await tempDir(), "tasks.json");
    const first = await fileStack(file);
    const task = await createTask(first.url, "slow_echo", { text: "cut short", ms: 60_000 });
    assert.equal((await getTask(first.url, idOf(task))).status, "working");
    await closeStack(first);

    const second = await fileStack(file);
    const later = await getTask(second.url, idOf(task));
    assert.equal(later.status, "failed");
    assert.match(String(later.statusMessage), /shut down while holding this task/);
    assert.equal((later.error as { code: number }).code, -32603);
  });
});

// ---------- the real restart: the CLI in a child process, SIGKILLed ----------

const children: ChildProcess[] = [];
const spawnGateway = (args: string[], env: Record<string, string>) => spawnChild(args, env, children);

describe("the real restart: CLI child process killed while holding a task", () => {
  let legacy: LegacyServer;
  before(async () => {
    // Slower than elsewhere (speed 4): build_report works for ~2 s before it asks, time enough to kill.
    legacy = await startLegacyServer({ port: 0, speed: 4 });
  });
  after(async () => {
    for (const child of children.splice(0)) await killHard(child);
    await legacy.close();
  });

  test("SIGKILL while working ⇒ the next process on the same file reports the task failed: gateway restarted", async () => {
    const file = join(await tempDir(), "tasks.json");
    const args = ["--upstream", legacy.url, "--port", "0", "--auth", "demo", "--store", "file", "--store-path", file];
    const env = { TASKGATE_TASKS_POLICY: "always", TASKGATE_LOG_LEVEL: "info" };

    const first = await spawnGateway(args, env);
    assert.match(first.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const started = new Promise<void>((resolve) =>
      legacy.events.on("tool-started", function listener(e: { tool: string }) {
        if (e.tool !== "build_report") return;
        legacy.events.off("tool-started", listener);
        resolve();
      }),
    );
    const task = await createTask(first.url, "build_report", { month: "2025-07" });
    await started;
    const working = await getTask(first.url, idOf(task));
    assert.equal(working.status, "working", "killed while the task is working");
    assert.ok(
      first.lines.some((l) => l.event === "task.created" && l.taskId === idOf(task)),
      "the child logged the task",
    );

    await killHard(first.process);
    assert.equal(first.process.signalCode, "SIGKILL");

    const second = await spawnGateway(args, env);
    assert.ok(
      second.lines.some((l) => l.event === "task.orphaned" && l.taskId === idOf(task)),
      "the new process logged that it failed the orphaned task",
    );
    const later = await getTask(second.url, idOf(task));
    assert.equal(later.status, "failed");
    assert.equal(later.taskId, idOf(task));
    assert.equal(later.createdAt, task.createdAt);
    assert.match(String(later.statusMessage), /restarted while holding this task/);
    const error = later.error as { code: number; message: string };
    assert.equal(error.code, -32603);
    assert.match(error.message, /restarted while holding this task/);
    assert.ok(Date.parse(later.lastUpdatedAt as string) >= Date.parse(working.lastUpdatedAt as string));
    assertRpcError(await taskRpc(second.url, "tasks/get", { taskId: idOf(task) }, "bob"), -32602);

    // The new process works normally on the same file.
    const fresh = await createTask(second.url, "greet", { name: "again" });
    const done = await waitForTask(second.url, idOf(fresh), hasStatus("completed"));
    assert.equal(textOf(done.result), "Hello, again!");
  });

  test("a YAML config file passed with --config works the same way", async () => {
    const dir = await tempDir();
    const file = join(dir, "tasks.json");
    const configFile = join(dir, "taskgate.yaml");
    await writeFile(
      configFile,
      [
        "upstream:",
        `  url: ${legacy.url}`,
        "port: 0",
        "auth:",
        "  mode: demo",
        "store:",
        "  kind: file",
        `  path: ${JSON.stringify(file)}`,
        "tasks:",
        "  policy: auto",
        "  tools:",
        "    slow_echo: always",
        "log:",
        "  level: info",
        "",
      ].join("\n"),
    );
    const first = await spawnGateway(["--config", configFile], {});
    const task = await createTask(first.url, "slow_echo", { text: "lost", ms: 60_000 });
    assert.equal((await getTask(first.url, idOf(task))).status, "working");
    await killHard(first.process);
    const second = await spawnGateway(["--config", configFile], {});
    const later = await getTask(second.url, idOf(task));
    assert.equal(later.status, "failed");
    assert.match(String(later.statusMessage), /restarted while holding this task/);
  });
});
