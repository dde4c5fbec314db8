// taskgate's own paths (src/config/ownPaths.ts) are the routes src/ mounts beside the MCP
// endpoints, and an MCP endpoint at or under one of them is refused at start, naming the option.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { WELL_KNOWN_PROTECTED_RESOURCE } from "../../src/auth/resourceMetadata.js";
import { ConfigError, loadConfig } from "../../src/config/loadConfig.js";
import { OWN_PATHS } from "../../src/config/ownPaths.js";
import { REPO } from "../support/repoRoot.js";

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** The first segment of every literal route src/ mounts on its express app. */
function mountedSegments(): Set<string> {
  const found = new Set<string>();
  for (const file of sources(join(REPO, "src"))) {
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(/app\.(?:get|post|put|delete|use|all)\(\s*(?:\[\s*)?"(\/[^"]*)"/g)) {
      found.add(`/${(match[1] as string).split("/")[1]}`);
    }
    for (const match of text.matchAll(/\bpath: "(\/[^"]*)"/g)) found.add(`/${(match[1] as string).split("/")[1]}`);
  }
  return found;
}

function problemsOf(config: Record<string, unknown>): string[] {
  try {
    loadConfig({ overrides: { auth: { mode: "demo" }, ...config } as never });
    return [];
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return [...error.problems];
  }
}

const URL_A = "http://127.0.0.1:3001/mcp";

describe("taskgate's own paths", () => {
  it("are the routes src/ mounts besides the MCP endpoints", () => {
    const mounted = mountedSegments();
    mounted.add(`/${WELL_KNOWN_PROTECTED_RESOURCE.split("/")[1]}`);
    assert.deepEqual([...mounted].sort(), [...OWN_PATHS].sort());
  });

  it("an MCP path at or under one of them is refused, naming the option", () => {
    for (const path of ["/readyz", "/metrics", "/tasks", "/console/mcp", "/.well-known/mcp"]) {
      const problems = problemsOf({ upstream: { url: URL_A }, path });
      assert.equal(problems.length, 1, `${path}: ${problems.join("; ")}`);
      assert.match(problems[0] as string, new RegExp(`^path: '${path.replace(/\./g, "\\.")}' is taskgate's own /`));
    }
    const [federated] = problemsOf({ backends: { a: { url: URL_A } }, federation: { path: "/readyz" } });
    assert.match(federated as string, /^federation\.path: '\/readyz' is taskgate's own \/readyz: choose a path outside /);
  });

  it("paths that only look alike are accepted", () => {
    assert.deepEqual(problemsOf({ upstream: { url: URL_A }, path: "/readyz-mcp" }), []);
    assert.deepEqual(problemsOf({ backends: { a: { url: URL_A } }, federation: { path: "/all" } }), []);
  });
});
