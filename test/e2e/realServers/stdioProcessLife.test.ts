// Issue 13, process life of a stdio upstream: a server process that dies fails its calls and tasks
// with its exit code or signal and its last stderr line, and the next request starts a new one;
// a server that cannot start is retried with back-off; the process bound is a clear 503; shutdown
// stops every process; and after `kill -9` of taskgate itself no server process is left.
// Real processes throughout: server-everything (stdio) and `node -e` programs that fail the way
// broken servers do (exit at once with a message on stderr).
// Run: node --import tsx --test test/e2e/realServers/stdioProcessLife.test.ts

import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { after, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import type { Gateway } from "../../../src/gateway.js";
import { killHard, spawnGateway } from "../../support/gatewayChild.js";
import { ready, startGatewayOnCommand } from "../../support/gatewayInFront.js";
import { errorOf, TASKS_CAPS } from "../../support/mcpClient.js";
import { isRunning } from "../../support/processes.js";
import { callTool, expectComplete, expectTask, textOf } from "../../support/realServerCalls.js";
import { STDIO_COMMANDS } from "../../support/servers/thirdParty.js";
import { hasStatus, waitForTask } from "../../support/tasks.js";
import { eventually } from "../../support/waiting.js";

const alice = { token: "alice", capabilities: TASKS_CAPS };
const LONG = { tasks: { tools: { "trigger-long-running-operation": "always" as const } } };

/** The pids `gateway` started since `before`. */
const newPids = (gateway: Gateway, before: number[]) => (gateway.upstreamProcesses?.() ?? []).filter((pid) => !before.includes(pid));

describe("stdio upstream: process life", () => {
  const gateways: Gateway[] = [];
  const children: ChildProcess[] = [];
  after(async () => {
    await Promise.all(gateways.map((gateway) => gateway.close()));
    await Promise.all(children.map((child) => killHard(child)));
  });

  test("a server process killed mid-task fails the task with the signal and its last stderr line; the next call starts a new process", async () => {
    const gateway = await startGatewayOnCommand(STDIO_COMMANDS.everything(), LONG);
    gateways.push(gateway);
    await ready(gateway);
    const idle = gateway.upstreamProcesses?.() ?? [];
    const task = expectTask(await callTool(gateway.url, "trigger-long-running-operation", { duration: 30, steps: 30 }, alice));
    const [pid] = newPids(gateway, idle);
    assert.ok(pid, "the call runs on a process of alice's own");
    process.kill(pid, "SIGKILL");
    const failed = await waitForTask(gateway.url, task.taskId as string, hasStatus("failed", "completed"), { timeoutMs: 10_000 });
    assert.equal(failed.status, "failed");
    const message = JSON.stringify(failed);
    assert.match(message, new RegExp(`server process ${pid} was killed by SIGKILL`));
    // Which of its lines came last depends on when the kill lands: its start line, or the log of its own roots sync (~350 ms
    // after initialize, which taskgate answers "Method not found" when the caller declared no roots).
    assert.match(message, /last stderr line: \\"(Starting default \(STDIO\) server\.\.\.|Failed to request roots from client[^"\\]*)\\"/);

    const echo = expectComplete(await callTool(gateway.url, "echo", { message: "restarted" }, alice));
    assert.match(textOf(echo), /restarted/);
    assert.equal(isRunning(pid), false);
    assert.equal(newPids(gateway, [...idle, pid]).length, 1, "a new process serves alice");
  });

  test("a server that exits at start says its exit code and last stderr line; restarts back off", async () => {
    const crashing = [
      process.execPath,
      "-e",
      "console.error('loading config'); console.error('fatal: MY_API_KEY is not set'); process.exit(3)",
    ];
    const gateway = await startGatewayOnCommand(crashing, { upstream: { initializeTimeoutMs: 5_000 } });
    gateways.push(gateway);
    const first = errorOf(await callTool(gateway.url, "echo", { message: "x" }, alice));
    assert.ok(first, "the call fails");
    assert.match(first.message, /Upstream server process \d+ exited with code 3; its last stderr line: "fatal: MY_API_KEY is not set"/);
    assert.equal((first.data as { reason?: string }).reason, "upstream_exited");
    const second = errorOf(await callTool(gateway.url, "echo", { message: "x" }, alice));
    assert.match(second?.message ?? "", /exited with code 3/);
    // At least two failed starts now (these calls; the readiness check at start may have run
    // alongside the first, so it is not counted on): the next start waits ≥ 500 ms.
    const started = Date.now();
    const third = errorOf(await callTool(gateway.url, "echo", { message: "x" }, alice));
    assert.match(third?.message ?? "", /exited with code 3/);
    assert.ok(Date.now() - started >= 400, `the restart backed off (${Date.now() - started} ms)`);
  });

  test("a command that cannot be started is upstream_unreachable naming the command", async () => {
    const gateway = await startGatewayOnCommand(["/nonexistent/mcp-server", "--stdio"]);
    gateways.push(gateway);
    const error = errorOf(await callTool(gateway.url, "echo", { message: "x" }, alice));
    assert.match(
      error?.message ?? "",
      /Upstream server could not be started \(upstream\.command: \/nonexistent\/mcp-server --stdio\): spawn \/nonexistent\/mcp-server ENOENT/,
    );
    assert.equal((error?.data as { reason?: string }).reason, "upstream_unreachable");
  });

  test("at upstream.maxProcesses, with every process busy, a new identity gets 503 naming the option", async () => {
    const gateway = await startGatewayOnCommand(STDIO_COMMANDS.everything(), { ...LONG, upstream: { maxProcesses: 1 } });
    gateways.push(gateway);
    await ready(gateway); // the readiness check's process is idle now: alice's call may take its place
    const task = expectTask(await callTool(gateway.url, "trigger-long-running-operation", { duration: 30, steps: 30 }, alice));
    const reply = await callTool(gateway.url, "echo", { message: "x" }, { token: "bob", capabilities: {} });
    assert.equal(reply.status, 503);
    assert.match(
      errorOf(reply)?.message ?? "",
      /upstream\.maxProcesses \(1\) server processes.*, all in use; retry later or raise upstream\.maxProcesses/,
    );
    assert.ok(task.taskId);
  });

  test("shutdown stops every server process (stdin closed, then signals, bounded by stopGraceMs)", async () => {
    const gateway = await startGatewayOnCommand(STDIO_COMMANDS.everything(), { ...LONG, upstream: { stopGraceMs: 500 } });
    expectTask(await callTool(gateway.url, "trigger-long-running-operation", { duration: 30, steps: 30 }, alice));
    expectComplete(await callTool(gateway.url, "echo", { message: "b" }, { token: "bob", capabilities: {} }));
    const pids = gateway.upstreamProcesses?.() ?? [];
    assert.ok(pids.length >= 2, `alice's and bob's processes run (${pids.join(", ")})`);
    const started = Date.now();
    await gateway.close();
    assert.deepEqual(pids.filter(isRunning), [], "no server process is left");
    assert.ok(Date.now() - started < 5_000, `shutdown took ${Date.now() - started} ms`);
  });

  test("a server process idle for upstream.sessionIdleMs is stopped; the identity's next call starts another", async () => {
    const gateway = await startGatewayOnCommand(STDIO_COMMANDS.everything(), { upstream: { sessionIdleMs: 300, stopGraceMs: 500 } });
    gateways.push(gateway);
    await ready(gateway);
    const before = gateway.upstreamProcesses?.() ?? [];
    expectComplete(await callTool(gateway.url, "echo", { message: "x" }, alice));
    const [pid] = newPids(gateway, before);
    assert.ok(pid);
    await eventually(() => !isRunning(pid), `idle process ${pid} stopped`, 5_000);
    expectComplete(await callTool(gateway.url, "echo", { message: "again" }, alice));
    assert.equal(newPids(gateway, [...before, pid]).length, 1);
  });

  test("a server that ignores stdin closing and SIGTERM is killed: shutdown is bounded by 2 × stopGraceMs", async () => {
    const [node, everything] = STDIO_COMMANDS.everything();
    // server-everything, made stubborn: SIGTERM ignored, a timer keeping it alive after stdin closes.
    const script = `process.on("SIGTERM", () => {}); setInterval(() => {}, 1000); process.argv.splice(1, 1); await import(${JSON.stringify(pathToFileURL(everything as string).href)});`;
    const gateway = await startGatewayOnCommand([node as string, "--input-type=module", "-e", script, everything as string, "stdio"], {
      upstream: { stopGraceMs: 300 },
    });
    expectComplete(await callTool(gateway.url, "echo", { message: "x" }, alice));
    const pids = gateway.upstreamProcesses?.() ?? [];
    assert.ok(pids.length > 0);
    const started = Date.now();
    await gateway.close();
    const took = Date.now() - started;
    assert.deepEqual(pids.filter(isRunning), [], "SIGKILL ended them");
    assert.ok(took >= 550 && took < 3_000, `stdin closed, 300 ms, SIGTERM, 300 ms, SIGKILL: took ${took} ms`);
  });

  test("a line on stdout that is not JSON-RPC is logged and skipped; the session goes on", async () => {
    // server-everything behind a line of junk on stdout, as servers that print a banner do.
    const [node, everything, mode] = STDIO_COMMANDS.everything();
    const script = `process.stdout.write("welcome to my server\\n"); process.argv.splice(1, 1); await import(${JSON.stringify(pathToFileURL(everything as string).href)});`;
    const command = [node, "--input-type=module", "-e", script, everything, mode].map((word) => JSON.stringify(word)).join(" ");
    const child = await spawnGateway(
      ["--port", "0", "--auth", "demo", "--upstream-command", command, "--log-format", "json"],
      {},
      children,
    );
    expectComplete(await callTool(child.url, "echo", { message: "after junk" }, alice));
    const warned = child.lines.find((line) => line.event === "upstream.stdout.invalid");
    assert.ok(warned, "the stray line is logged");
    assert.equal(typeof warned.pid, "number");
    await killHard(child.process);
  });

  test("after kill -9 of taskgate, its server processes are gone too", async () => {
    const command = STDIO_COMMANDS.everything()
      .map((word) => JSON.stringify(word))
      .join(" ");
    const child = await spawnGateway(
      ["--port", "0", "--auth", "demo", "--upstream-command", command, "--log-format", "json"],
      { TASKGATE_UPSTREAM_STOP_GRACE_MS: "500" },
      children,
    );
    expectComplete(await callTool(child.url, "echo", { message: "a" }, alice));
    expectComplete(await callTool(child.url, "echo", { message: "b" }, { token: "bob", capabilities: {} }));
    const pids = child.lines.filter((line) => line.event === "upstream.process.started").map((line) => line.pid as number);
    assert.ok(pids.length >= 2, `server processes were started (${pids.join(", ")})`);
    assert.ok(pids.every(isRunning));
    // Each process's stderr is in taskgate's log, with its pid and session.
    const stderr = child.lines.find((line) => line.event === "upstream.stderr" && pids.includes(line.pid as number));
    assert.ok(stderr, "stderr lines are logged");
    assert.equal(stderr.line, "Starting default (STDIO) server...");
    assert.equal(typeof stderr.session, "string");
    await killHard(child.process);
    await eventually(() => !pids.some(isRunning), `server processes ${pids.join(", ")} end after taskgate was killed`, 5_000);
  });
});
