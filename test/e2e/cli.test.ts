// The taskgate command as a user runs it: bad or missing options stop start-up with a message
// naming the option and what is allowed; hash-token prints what tokens mode stores.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import { REPO } from "../repoRoot.js";
import { cliArgs } from "./childGateway.js";

const run = (args: string[], env: Record<string, string> = {}) => {
  const { TASKGATE_CONFIG: _ignored, ...base } = process.env;
  return spawnSync(process.execPath, cliArgs(args), { cwd: REPO, encoding: "utf8", env: { ...base, ...env }, timeout: 30_000 });
};

describe("taskgate command", () => {
  test("serve without upstream or auth mode stops with exit 2, naming both options and how to set them", () => {
    const result = run(["serve"]);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /upstream\.url: is required but not set/);
    assert.match(result.stderr, /TASKGATE_UPSTREAM_URL/);
    assert.match(result.stderr, /auth\.mode: is required but not set.*'demo'.*'tokens'/);
  });

  test("a bad value names the option, its source and what is allowed", () => {
    const result = run(["serve", "--upstream", "http://127.0.0.1:1/mcp", "--auth", "demo"], { TASKGATE_STORE_KIND: "postgres" });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /store\.kind: .*memory.*file.*redis/);
    assert.match(result.stderr, /TASKGATE_STORE_KIND/);
  });

  test("a misspelt TASKGATE_ variable is refused with a suggestion", () => {
    const result = run(["serve", "--upstream", "http://127.0.0.1:1/mcp", "--auth", "demo"], { TASKGATE_PORTT: "1" });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /TASKGATE_PORTT: unknown environment variable \(did you mean TASKGATE_PORT\?\)/);
  });

  test("hash-token prints the sha256 that auth.tokens stores", () => {
    const result = run(["hash-token", "s3cret"]);
    assert.equal(result.status, 0);
    assert.equal(result.stdout.trim(), createHash("sha256").update("s3cret").digest("hex"));
  });
});
