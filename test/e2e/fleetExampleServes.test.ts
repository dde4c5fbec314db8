// The fleet example's own taskgate.yaml (examples/fleet), served by `taskgate serve --config` as a
// real child process, the way its Compose file runs it — minus the containers (no engine runs
// here). Only what a container network gives is substituted: the service names in the backends'
// URLs become real servers on loopback (server-everything over HTTP, the example legacy server),
// /srv/shared (a volume there) becomes a fresh folder, 127.0.0.1 stands for the image's 0.0.0.0,
// and the image's installed mcp-server-filesystem is the one npm installed (node_modules/.bin on
// PATH). The tokens are compose.yaml's example tokens. Shown: /readyz names the three backends, the
// federated catalog and a call of each backend, the file's task policies on the backends' paths, the
// service name accepted as Host, and a request without a token refused.
// Run: node --import tsx --test test/e2e/fleetExampleServes.test.ts

import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import type { JsonObject } from "../../src/protocol/wire.js";
import { readCompose } from "../support/composeFiles.js";
import { killHard, spawnGateway } from "../support/gatewayChild.js";
import { resultOf, rpc } from "../support/mcpClient.js";
import { expectComplete, textOf } from "../support/realServerCalls.js";
import { REPO } from "../support/repoRoot.js";
import type { ServerProcess } from "../support/servers/serverProcess.js";
import { startThirdPartyServer } from "../support/servers/thirdParty.js";
import { cancelTask, hasStatus, keysOf, TASKS_AND_FORMS, updateTask, waitForTask } from "../support/tasks.js";

const EXAMPLE = join(REPO, "examples", "fleet");
const ALICE = "alice-secret-token";
const compose = readCompose(join(EXAMPLE, "compose.yaml"));
const tokens = /\$\{TASKGATE_AUTH_TOKENS:-([^}]+)\}/.exec(compose.services.taskgate?.environment?.TASKGATE_AUTH_TOKENS ?? "")?.[1];

/** A GET with a Host header of our choosing (fetch does not let one be set). */
function getWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the fleet example's taskgate.yaml, served on loopback", () => {
  let everything: ServerProcess;
  let legacy: LegacyServer;
  let dir: string;
  let base: string;
  const children: ChildProcess[] = [];
  const who = { token: ALICE, capabilities: TASKS_AND_FORMS };
  const call = (path: string, name: string, args: JsonObject = {}) => rpc(`${base}${path}`, "tools/call", { name, arguments: args }, who);

  before(async () => {
    assert.ok(tokens, "compose.yaml gives example tokens");
    dir = realpathSync(mkdtempSync(join(tmpdir(), "taskgate-fleet-example-")));
    const shared = join(dir, "shared");
    [everything, legacy] = await Promise.all([startThirdPartyServer("everything"), startLegacyServer({ port: 0, speed: 20 })]);
    const original = readFileSync(join(EXAMPLE, "taskgate.yaml"), "utf8");
    const local = original
      .replace("http://everything:3001/mcp", everything.url)
      .replace("http://legacy:3001/mcp", legacy.url)
      .replaceAll("/srv/shared", shared);
    assert.equal(local.split("\n").length, original.split("\n").length);
    assert.ok(!/everything:3001|legacy:3001|\/srv\/shared/.test(local), "every container name substituted");
    mkdirSync(shared);
    writeFileSync(join(shared, "notes.txt"), "from the shared volume\n");
    writeFileSync(join(dir, "taskgate.yaml"), local);
    const child = await spawnGateway(
      ["--config", join(dir, "taskgate.yaml"), "--port", "0"],
      {
        TASKGATE_AUTH_TOKENS: tokens as string,
        TASKGATE_HOST: "127.0.0.1",
        PATH: `${join(REPO, "node_modules", ".bin")}${delimiter}${process.env.PATH ?? ""}`,
        TASKGATE_LOG_LEVEL: "info",
      },
      children,
    );
    base = new URL(child.url).origin;
  });

  after(async () => {
    for (const child of children) await killHard(child);
    await Promise.all([everything?.stop(), legacy?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  test("/readyz is ready with one check per backend, beside the store", async () => {
    const response = await fetch(`${base}/readyz`);
    const body = (await response.json()) as { checks: Record<string, { ok?: boolean; status?: string }> };
    assert.equal(response.status, 200, JSON.stringify(body));
    assert.deepEqual(Object.keys(body.checks).sort(), ["backend:everything", "backend:files", "backend:legacy", "store"]);
  });

  test("/mcp is the federated catalog, and a call of each backend goes through it", async () => {
    const tools = (resultOf(await rpc(`${base}/mcp`, "tools/list", {}, { token: ALICE })).tools as JsonObject[]).map((t) => t.name);
    for (const name of ["everything__echo", "files__list_directory", "legacy__greet", "legacy__build_report"]) {
      assert.ok(tools.includes(name), `${name} in ${tools.length} tools`);
    }
    assert.match(textOf(expectComplete(await call("/mcp", "everything__echo", { message: "compose" }))), /compose/);
    const listing = textOf(expectComplete(await call("/mcp", "files__list_directory", { path: join(dir, "shared") })));
    assert.match(listing, /notes\.txt/);
    assert.match(textOf(expectComplete(await call("/mcp", "legacy__greet", { name: "fleet" }))), /Hello, fleet!/);
  });

  test("the file's task policies hold on the backends' own paths: a question answered, a cancel", async () => {
    const report = resultOf(await call("/mcp/legacy", "build_report", { month: "2026-01" }));
    assert.equal(report.resultType, "task", JSON.stringify(report));
    const asking = await waitForTask(`${base}/mcp/legacy`, report.taskId as string, hasStatus("input_required"), {
      timeoutMs: 15_000,
      token: ALICE,
    });
    await updateTask(`${base}/mcp/legacy`, report.taskId as string, { [keysOf(asking)[0] as string]: { action: "decline" } }, ALICE);
    const done = await waitForTask(`${base}/mcp/legacy`, report.taskId as string, hasStatus("completed", "failed"), {
      timeoutMs: 15_000,
      token: ALICE,
    });
    assert.equal(done.status, "completed", JSON.stringify(done));
    const long = resultOf(await call("/mcp/everything", "trigger-long-running-operation", { duration: 30, steps: 30 }));
    assert.equal(long.resultType, "task", JSON.stringify(long));
    await cancelTask(`${base}/mcp/everything`, long.taskId as string, ALICE);
    const cancelled = await waitForTask(`${base}/mcp/everything`, long.taskId as string, hasStatus("cancelled", "failed"), {
      token: ALICE,
    });
    assert.equal(cancelled.status, "cancelled");
  });

  test("the service name is accepted as Host, another name is not; no token, no call", async () => {
    assert.equal(await getWithHost(`${base}/readyz`, "taskgate:3000"), 200);
    const port = new URL(base).port;
    assert.equal(await getWithHost(`${base}/mcp`, `127.0.0.1:${port}`), 405, "GET on the MCP path: answered, not refused for its Host");
    assert.equal(await getWithHost(`${base}/mcp`, "elsewhere.example"), 403);
    const anonymous = await rpc(`${base}/mcp`, "tools/list", {}, { token: null });
    assert.equal(anonymous.status, 401, JSON.stringify(anonymous.message));
    const wrong = await rpc(`${base}/mcp/files`, "tools/list", {}, { token: "not-a-token" });
    assert.equal(wrong.status, 401, JSON.stringify(wrong.message));
  });
});
