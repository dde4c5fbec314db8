// Issue 13: @modelcontextprotocol/server-filesystem (stdio only) on a temporary directory, started
// by taskgate: list, read and write through taskgate, and a write is on disk. `upstream.cwd` (the
// directory is given as ".") and `upstream.env` reach the process; taskgate's own variables do not.
// Run: node --import tsx --test test/e2e/realServers/stdioFilesystem.test.ts

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Gateway } from "../../../src/gateway.js";
import { ready, startGatewayOnCommand } from "../../support/gatewayInFront.js";
import { resultOf } from "../../support/mcpClient.js";
import { call, callTool, expectComplete, textOf } from "../../support/realServerCalls.js";
import { STDIO_COMMANDS } from "../../support/servers/thirdParty.js";

const alice = { token: "alice", capabilities: {} };

describe("server-filesystem over stdio on a temporary directory", () => {
  let dir: string;
  let gateway: Gateway;

  before(async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "taskgate-fs-")));
    writeFileSync(join(dir, "hello.txt"), "hello from disk\n");
    // "." resolved in upstream.cwd: the server serves the temporary directory only if cwd reached it.
    gateway = await startGatewayOnCommand(STDIO_COMMANDS.filesystem("."), { upstream: { cwd: dir } });
    await ready(gateway); // a cold first server start is waited for here, not in a call's time limit
  });
  after(async () => {
    await gateway?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("its tools are listed", async () => {
    const tools = resultOf(await call(gateway.url, "tools/list", {}, alice));
    const names = (tools?.tools as { name: string }[]).map((tool) => tool.name);
    for (const name of ["read_text_file", "write_file", "list_directory"])
      assert.ok(names.includes(name), `${name} in ${names.join(", ")}`);
  });

  test("list_directory and read_text_file show the directory's files", async () => {
    const listing = expectComplete(await callTool(gateway.url, "list_directory", { path: dir }, alice));
    assert.match(textOf(listing), /\[FILE\] hello\.txt/);
    const read = expectComplete(await callTool(gateway.url, "read_text_file", { path: join(dir, "hello.txt") }, alice));
    assert.match(textOf(read), /hello from disk/);
  });

  test("write_file through taskgate is on disk, and reads back", async () => {
    const path = join(dir, "written.txt");
    const written = expectComplete(await callTool(gateway.url, "write_file", { path, content: "written through taskgate" }, alice));
    assert.notEqual(written.isError, true, textOf(written));
    assert.equal(readFileSync(path, "utf8"), "written through taskgate");
    const read = expectComplete(await callTool(gateway.url, "read_text_file", { path }, { token: "bob", capabilities: {} }));
    assert.match(textOf(read), /written through taskgate/);
  });

  test("outside its directory the server refuses (its own error, as a tool error)", async () => {
    const outside = expectComplete(await callTool(gateway.url, "read_text_file", { path: "/etc/hostname" }, alice));
    assert.equal(outside.isError, true);
    assert.match(textOf(outside), /outside allowed directories|Access denied/i);
  });
});

describe("upstream.env reaches the started server, taskgate's own environment does not", () => {
  let gateway: Gateway;

  before(async () => {
    process.env.TASKGATE_TEST_SECRET = "must-not-leak";
    gateway = await startGatewayOnCommand(STDIO_COMMANDS.everything(), { upstream: { env: { GREETING: "hello from upstream.env" } } });
    await ready(gateway); // a cold first server start is waited for here, not in a call's time limit
  });
  after(async () => {
    delete process.env.TASKGATE_TEST_SECRET;
    await gateway?.close();
  });

  test("get-env shows upstream.env and PATH, and none of taskgate's other variables", async () => {
    const env = expectComplete(await callTool(gateway.url, "get-env", {}, alice));
    const text = textOf(env);
    assert.match(text, /hello from upstream\.env/);
    assert.doesNotMatch(text, /must-not-leak/, "taskgate's own environment is not passed on");
    assert.match(text, /"PATH"/, "PATH is passed on (the SDK's safe list)");
  });
});
