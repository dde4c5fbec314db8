// examples/stdio-server/Dockerfile cannot be built here (no container engine): this checks what
// can be checked without one. It builds on taskgate's image, pins the stdio server to the version
// the tests run (package.json devDependencies), and its TASKGATE_UPSTREAM_COMMAND starts a
// program that package installs and is a valid upstream.command. The config file made for it
// (examples/stdio-server/taskgate.yaml) loads with the image's variables; the general example,
// which sets upstream.url, is refused beside them, naming where each of the two came from.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ConfigError, loadConfig, loadConfigWithReport } from "../../src/config/loadConfig.js";
import { dockerCmd, dockerTaskgateEnv } from "../support/dockerfiles.js";
import { REPO } from "../support/repoRoot.js";

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
      config.upstream?.command?.[0] && config.upstream?.command[0] in bins,
      `${config.upstream?.command?.[0]} is a program of the package (${Object.keys(bins).join(", ")})`,
    );
    assert.deepEqual(config.upstream?.command, ["mcp-server-filesystem", "/data"]);
  });

  /** What a container of this image has: the base image's variables, then this one's. */
  const imageEnv = { ...dockerTaskgateEnv("Dockerfile"), ...dockerTaskgateEnv("examples/stdio-server/Dockerfile") };

  it("its own example config loads with the image's variables: the image's command, 0.0.0.0, the file's tokens", () => {
    const file = join(REPO, "examples", "stdio-server", "taskgate.yaml");
    const { config, report } = loadConfigWithReport({ file, env: imageEnv });
    assert.deepEqual(config.upstream?.command, ["mcp-server-filesystem", "/data"]);
    assert.equal(config.upstream?.url, undefined);
    assert.equal(config.upstream?.maxProcesses, 20);
    assert.equal(config.host, "0.0.0.0");
    assert.deepEqual(dockerCmd("Dockerfile"), ["serve"], "the image's command passes no flag that would replace the file's values");
    assert.equal(config.auth.mode, "tokens");
    assert.deepEqual(report.overridden, [], "nothing in the file is silently replaced by the image");
  });

  it("config/taskgate.example.yaml, which sets upstream.url, is refused in it, naming the file line and the variable", () => {
    const file = join(REPO, "config", "taskgate.example.yaml");
    const error = (() => {
      try {
        loadConfig({ file, env: { ...imageEnv, TASKGATE_AUTH_TOKENS: `${"a".repeat(64)}:alice` } });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    assert.ok(error instanceof ConfigError, "refused");
    assert.equal(error.problems.length, 1);
    assert.match(
      error.problems[0] as string,
      /^upstream\.command: upstream\.url and upstream\.command are mutually exclusive.*remove one \(from TASKGATE_UPSTREAM_COMMAND\); upstream\.url is set in config file .*taskgate\.example\.yaml, line \d+$/,
    );
  });
});
