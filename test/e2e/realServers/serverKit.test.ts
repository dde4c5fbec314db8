// The kit that runs third-party servers for the real-server tests, tested on real processes: the
// loopback-only preload binds every listen to 127.0.0.1; a server that dies or never gets ready
// fails with its exit code / last lines and is reaped; server-everything gets a minimal
// environment (its get-env tool returns the whole env); restart keeps the port; stop reaps.
// Run: node --import tsx --test test/e2e/realServers/serverKit.test.ts

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { preloadArgs } from "../../support/fixtureModules.js";
import { freePort } from "../../support/ports.js";
import { type ServerProcess, startServerProcess } from "../../support/servers/serverProcess.js";
import { startThirdPartyServer } from "../../support/servers/thirdParty.js";

/** Runs `script` (CommonJS, via -e) under the preload; resolves with its stdout. */
function runWithPreload(script: string, env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...preloadArgs("loopbackOnly"), "-e", script], {
      env: { PATH: process.env.PATH ?? "", ...env },
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`preload child exited with ${code}: ${err}`));
    });
  });
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Prints the address each listen form binds, then exits. */
const LISTEN_FORMS = `
const net = require("node:net");
const forms = [[0], [0, "0.0.0.0"], [{ port: 0 }], [{ port: 0, host: "::" }]];
(async () => {
  for (const args of forms) {
    const server = net.createServer();
    await new Promise((resolve) => server.listen(...args, resolve));
    console.log(server.address().address);
    await new Promise((resolve) => server.close(resolve));
  }
})();
`;

describe("the loopback-only preload", () => {
  test("listen(port), listen(port, '0.0.0.0'), listen({port}) and listen({port, host: '::'}) all bind 127.0.0.1", async () => {
    assert.deepEqual((await runWithPreload(LISTEN_FORMS)).trim().split("\n"), ["127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.1"]);
  });

  test("FORCE_LISTEN_PORT replaces a hard-coded port", async () => {
    const port = await freePort();
    const script = `const s = require("node:net").createServer(); s.listen(3000, () => { console.log(s.address().port); s.close(); });`;
    assert.equal((await runWithPreload(script, { FORCE_LISTEN_PORT: String(port) })).trim(), String(port));
  });
});

describe("startServerProcess: readiness", () => {
  test("a server that exits before its readiness line fails with its exit code and last lines", async () => {
    const launch = {
      name: "dies-early",
      args: ["-e", "console.log('about to fail'); process.exit(3)"],
      portVariable: "PORT",
      ready: /never printed/,
    };
    await assert.rejects(
      startServerProcess(launch, await freePort()),
      /dies-early exited before it was ready \(code 3, signal null\); last lines:\nabout to fail/,
    );
  });

  test("a server that never prints its readiness line fails after readyTimeoutMs with its last lines, and is reaped", async () => {
    const launch = {
      name: "never-ready",
      args: ["-e", "console.log('pid ' + process.pid); console.error('still booting'); setInterval(() => {}, 1000)"],
      portVariable: "PORT",
      ready: /never printed/,
      readyTimeoutMs: 4_000, // time for node (and tsx, when run from source) to print under load
    };
    const error = await startServerProcess(launch, await freePort()).then(
      () => assert.fail("expected the start to fail"),
      (e: Error) => e,
    );
    assert.match(error.message, /never-ready: no output line matching \/never printed\/ within 4000 ms; last lines:\n/);
    assert.match(error.message, /stderr: still booting/);
    const pid = Number(/pid (\d+)/.exec(error.message)?.[1]);
    assert.ok(pid > 0, error.message);
    assert.equal(isAlive(pid), false, "the child was killed and reaped before the error");
  });
});

describe("server-everything started by the kit", () => {
  let everything: ServerProcess;
  const canary = `canary-${randomUUID()}`;

  before(async () => {
    process.env.TASKGATE_KIT_CANARY = canary;
    everything = await startThirdPartyServer("everything");
  });
  after(async () => {
    delete process.env.TASKGATE_KIT_CANARY;
    await everything?.stop();
  });

  const connect = async () => {
    const client = new Client({ name: "kit-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(everything.url)));
    return client;
  };

  test("it gets a minimal environment: get-env shows its PORT and nothing of the test process", async () => {
    const client = await connect();
    try {
      const result = await client.callTool({ name: "get-env", arguments: {} });
      const text = JSON.stringify(result);
      assert.match(text, new RegExp(`PORT\\\\"?: ?\\\\"${everything.port}`));
      assert.equal(text.includes(canary), false, "a variable of the test process leaked into the server");
    } finally {
      await client.close();
    }
  });

  test("restart brings it back on the same port, as a new process with no old sessions", async () => {
    const old = await connect();
    const oldPid = everything.pid;
    try {
      await everything.restart();
      assert.notEqual(everything.pid, oldPid);
      await assert.rejects(old.listTools(), /No valid session ID/, "the old session is gone");
      const fresh = await connect();
      assert.ok((await fresh.listTools()).tools.some((tool) => tool.name === "echo"));
      await fresh.close();
    } finally {
      await old.close().catch(() => undefined);
    }
  });

  test("stop ends the process and reaps it", async () => {
    const pid = everything.pid!;
    assert.ok(isAlive(pid));
    await everything.stop();
    assert.equal(isAlive(pid), false);
  });
});
