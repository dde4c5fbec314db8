// examples/fleet (no container engine runs here, so it is checked by reading it): its taskgate.yaml
// loads with taskgate's own loader and the tokens compose.yaml gives it; the backends point at the
// compose services and at the server the image installs; the image pins the versions taskgate's
// tests run; taskgate reads the file from the mounted folder.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { loadConfig } from "../../src/config/loadConfig.js";
import { REPO } from "../support/repoRoot.js";

const dir = join(REPO, "examples", "fleet");
const compose = parse(readFileSync(join(dir, "compose.yaml"), "utf8")) as {
  services: Record<string, { command?: string[]; entrypoint?: string[]; environment?: Record<string, string>; volumes?: string[] }>;
};
const tokens = /\$\{TASKGATE_AUTH_TOKENS:-([^}]+)\}/.exec(compose.services.taskgate?.environment?.TASKGATE_AUTH_TOKENS ?? "")?.[1];

describe("the fleet example", () => {
  it("taskgate.yaml loads as a fleet of three backends with a federated endpoint", () => {
    assert.ok(tokens, "compose.yaml gives example tokens");
    const config = loadConfig({ file: join(dir, "taskgate.yaml"), env: { TASKGATE_AUTH_TOKENS: tokens } });
    assert.deepEqual(Object.keys(config.backends ?? {}), ["everything", "files", "legacy"]);
    assert.equal(config.backends?.everything?.url, "http://everything:3001/mcp");
    assert.equal(config.backends?.legacy?.url, "http://legacy:3001/mcp");
    assert.deepEqual(config.backends?.files?.command, ["mcp-server-filesystem", "/srv/shared"]);
    assert.equal(config.federation?.path, "/mcp");
  });

  it("compose runs the services the backends name, and taskgate reads the mounted file", () => {
    assert.deepEqual(compose.services.everything?.entrypoint, ["mcp-server-everything", "streamableHttp"]);
    assert.equal(compose.services.everything?.environment?.PORT, "3001");
    assert.equal(compose.services.legacy?.environment?.LEGACY_PORT, "3001");
    assert.deepEqual(compose.services.taskgate?.command, ["serve", "--config", "/etc/taskgate/taskgate.yaml"]);
    assert.ok(compose.services.taskgate?.volumes?.includes("./:/etc/taskgate:ro"));
  });

  it("the image pins the servers at the versions taskgate's tests run", () => {
    const dockerfile = readFileSync(join(dir, "Dockerfile"), "utf8");
    const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { devDependencies: Record<string, string> };
    for (const name of ["@modelcontextprotocol/server-filesystem", "@modelcontextprotocol/server-everything"]) {
      const version = pkg.devDependencies[name]?.replace(/^[\^~]/, "");
      assert.ok(dockerfile.includes(`${name}@${version}`), `${name}@${version} in examples/fleet/Dockerfile`);
    }
  });
});
