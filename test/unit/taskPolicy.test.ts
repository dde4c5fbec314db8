import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { policyFor } from "../../src/calls/taskPolicy.js";
import { ConfigSchema } from "../../src/config/schema.js";

const tasks = ConfigSchema.parse({
  upstream: { url: "http://127.0.0.1:1/mcp" },
  auth: { mode: "demo" },
  tasks: { policy: "auto", tools: { greet: "never", build_report: "always" } },
}).tasks;

describe("task policy per tool", () => {
  it("a tool listed in config uses its configured policy, whatever the upstream says", () => {
    assert.equal(policyFor("greet", tasks, "required"), "never");
    assert.equal(policyFor("build_report", tasks, undefined), "always");
  });
  it("an unlisted tool marked taskSupport required upstream is task-only", () => {
    assert.equal(policyFor("deploy", tasks, "required"), "required");
  });
  it("an unlisted tool marked taskSupport optional upstream is auto", () => {
    assert.equal(policyFor("deploy", { ...tasks, policy: "never" }, "optional"), "auto");
  });
  it("taskSupport forbidden (SDK 1.x's stamp on every plain tool) leaves the configured default", () => {
    assert.equal(policyFor("deploy", { ...tasks, policy: "always" }, "forbidden"), "always");
  });
  it("an unlisted tool without a hint gets the default", () => {
    assert.equal(policyFor("deploy", tasks, undefined), "auto");
  });
});
