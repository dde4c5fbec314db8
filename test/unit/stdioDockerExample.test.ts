// examples/stdio-server/Dockerfile cannot be built here (no container engine): this checks what
// can be checked without one. It builds on taskgate's image, pins the stdio server to the version
// the tests run (package.json devDependencies), and its TASKGATE_UPSTREAM_COMMAND starts a
// program that package installs and is a valid upstream.command.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { loadConfig } from "../../src/config/loadConfig.js";
import { REPO } from "../repoRoot.js";

const dockerfile = readFileSync(join(REPO, "examples", "stdio-server", "Dockerfile"), "utf8");
const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { devDependencies: Record<string, string> };

describe("examples/stdio-server/Dockerfile", () => {
  it("builds on taskgate's image", () => {
    assert.match(dockerfile, /^FROM taskgate$/m);
  });

  it("installs the stdio server at the version the tests run", () => {
    const pinned = /npm install -g [^\n]*@modelcontextprotocol\/server-filesystem@(\S+)/.exec(dockerfile)?.[1];
    assert.equal(pinned, pkg.devDependencies["@modelcontextprotocol/server-filesystem"]);
  });

  it("starts a program that package installs, through a valid upstream.command", () => {
    const line = /^ENV TASKGATE_UPSTREAM_COMMAND="([^"]+)"$/m.exec(dockerfile)?.[1];
    assert.ok(line, "the image sets TASKGATE_UPSTREAM_COMMAND");
    const config = loadConfig({
      env: { TASKGATE_UPSTREAM_COMMAND: line, TASKGATE_AUTH_MODE: "demo", TASKGATE_UPSTREAM_MAX_PROCESSES: "20" },
    });
    const bins = (
      JSON.parse(readFileSync(join(REPO, "node_modules", "@modelcontextprotocol", "server-filesystem", "package.json"), "utf8")) as {
        bin: Record<string, string>;
      }
    ).bin;
    assert.ok(
      config.upstream.command?.[0] && config.upstream.command[0] in bins,
      `${config.upstream.command?.[0]} is a program of the package (${Object.keys(bins).join(", ")})`,
    );
    assert.deepEqual(config.upstream.command, ["mcp-server-filesystem", "/data"]);
  });
});
