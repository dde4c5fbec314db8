// The Python SDK 2.x serves both eras on one endpoint (test/support/fixtures/pythonDualEraServer.py); behind
// taskgate (upstream.protocol auto) it is spoken to in 2026-07-28. Needs a Python with the SDK:
// TASKGATE_TEST_PYTHON=/path/to/python (one where `pip install mcp` installed 2.x); without it the
// test is skipped and says why.

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Gateway } from "../../../src/gateway.js";
import type { JsonObject } from "../../../src/protocol/wire.js";
import { startGatewayInFront } from "../../support/gatewayInFront.js";
import { onFreePort } from "../../support/ports.js";
import { call, callTool, expectComplete, textOf } from "../../support/realServerCalls.js";
import { REPO } from "../../support/repoRoot.js";
import { type ServerProcess, startServerProcess } from "../../support/servers/serverProcess.js";

const python = process.env.TASKGATE_TEST_PYTHON;
const skip = python ? false : "set TASKGATE_TEST_PYTHON to a Python with the MCP SDK 2.x (pip install mcp) to run it";

describe("a dual-era server on the Python SDK 2.x", { skip }, () => {
  let server: ServerProcess;
  let gateway: Gateway;

  before(async () => {
    const launch = {
      name: "python SDK fixture",
      command: python as string,
      args: [join(REPO, "test", "support", "fixtures", "pythonDualEraServer.py")],
      portVariable: "PORT",
      ready: /Uvicorn running on/,
    };
    server = await onFreePort((port) => startServerProcess(launch, port));
    gateway = await startGatewayInFront(server.url);
  });
  after(async () => {
    await gateway?.close();
    await server?.stop();
  });

  it("is spoken to in 2026-07-28 and answers a call", async () => {
    const discover = expectComplete(await call(gateway.url, "server/discover"));
    assert.equal(((discover._meta as JsonObject)["dev.taskgate/backend"] as JsonObject).era, "modern");
    const greeted = expectComplete(await callTool(gateway.url, "greet", { name: "Ada" }, { token: "alice", capabilities: {} }));
    assert.match(textOf(greeted) ?? "", /Hello, Ada! \(python\)/);
  });
});
