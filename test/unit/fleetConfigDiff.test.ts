import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { changesAnything, diffBackends } from "../../src/fleet/configDiff.js";

const everything = { url: "http://127.0.0.1:3001/mcp", requestTimeoutMs: 30_000 };
const files = { command: ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv"], requestTimeoutMs: 30_000 };

describe("what a reload changes", () => {
  it("names the backends added, removed, changed and unchanged", () => {
    const diff = diffBackends(
      { port: 3000, backends: { everything, files, old: everything } },
      { port: 3000, backends: { everything, files: { ...files, requestTimeoutMs: 5_000 }, fresh: everything } },
    );
    assert.deepEqual(diff.added, ["fresh"]);
    assert.deepEqual(diff.removed, ["old"]);
    assert.deepEqual(diff.changed, ["files"]);
    assert.deepEqual(diff.unchanged, ["everything"]);
    assert.deepEqual(diff.needsRestart, []);
    assert.equal(diff.federationChanged, false);
    assert.ok(changesAnything(diff));
  });

  it("sees a change deep inside a backend's options (a per-tool task policy)", () => {
    const diff = diffBackends(
      { backends: { everything: { ...everything, tasks: { tools: { "long-operation": "always" } } } } },
      { backends: { everything: { ...everything, tasks: { tools: { "long-operation": "never" } } } } },
    );
    assert.deepEqual(diff.changed, ["everything"]);
  });

  it("names the options outside backends and federation that a reload cannot apply", () => {
    const diff = diffBackends(
      { port: 3000, auth: { mode: "demo" }, backends: { everything } },
      { port: 3001, auth: { mode: "demo" }, backends: { everything }, store: { kind: "file" } },
    );
    assert.deepEqual(diff.needsRestart, ["port", "store"]);
  });

  it("notices a federation change, and nothing when nothing changed", () => {
    assert.equal(diffBackends({ federation: { path: "/mcp" } }, { federation: { path: "/all" } }).federationChanged, true);
    const same = diffBackends({ backends: { everything } }, { backends: { everything: { ...everything } } });
    assert.equal(changesAnything(same), false);
  });
});
