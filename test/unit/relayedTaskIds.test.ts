// The ids of a modern backend's own tasks as clients see them (src/tasks/relayedTaskIds.ts): only
// the owner opens one, an altered or foreign one opens as nothing, the same task keeps one id, and
// instances with the same mrtr.secret agree. Also what the backend is sent of a caller's _meta
// when taskgate runs the call itself (src/upstream/modernCall.ts metaForCall).

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RelayedTaskIds } from "../../src/tasks/relayedTaskIds.js";
import { metaForCall } from "../../src/upstream/modernCall.js";

describe("relayed task ids", () => {
  const ids = new RelayedTaskIds("a secret of at least some length");
  const task = { backendTaskId: "786512e2-9e0d-44bd-8f29-789f320fe840", owner: "owner-alice" };

  it("opens for its owner only", () => {
    const id = ids.wrap(task);
    assert.match(id, /^rt\.[A-Za-z0-9_-]+$/, "header-safe");
    assert.deepEqual(ids.open(id, "owner-alice"), task);
    assert.equal(ids.open(id, "owner-bob"), undefined);
  });

  it("is the same id for the same task, another for another task", () => {
    assert.equal(ids.wrap(task), ids.wrap(task));
    assert.notEqual(ids.wrap(task), ids.wrap({ ...task, backendTaskId: "other" }));
  });

  it("refuses an altered id, a taskgate id and one sealed under another secret", () => {
    const id = ids.wrap(task);
    const flipped = `${id.slice(0, -2)}${id.at(-2) === "A" ? "B" : "A"}${id.at(-1)}`;
    assert.equal(ids.open(flipped, "owner-alice"), undefined);
    assert.equal(ids.open("Nexx2fMjbpuiH3et9QgXWbwgw90", "owner-alice"), undefined);
    assert.equal(ids.open("rt.", "owner-alice"), undefined);
    assert.equal(new RelayedTaskIds("another secret").open(id, "owner-alice"), undefined);
    assert.deepEqual(new RelayedTaskIds("a secret of at least some length").open(id, "owner-alice"), task);
  });
});

describe("relayed task ids of a fleet backend", () => {
  it("name the backend, which the federated endpoint reads without opening them; another backend's ids do not open", () => {
    const search = new RelayedTaskIds("s", "search");
    const id = search.wrap({ backendTaskId: "t-1", owner: "o" });
    assert.equal(RelayedTaskIds.backendOf(id), "search");
    assert.deepEqual(search.open(id, "o"), { backendTaskId: "t-1", owner: "o" });
    assert.equal(new RelayedTaskIds("s", "files").open(id, "o"), undefined);
    assert.equal(new RelayedTaskIds("s").open(id, "o"), undefined);
    assert.equal(RelayedTaskIds.backendOf(new RelayedTaskIds("s").wrap({ backendTaskId: "t-1", owner: "o" })), undefined);
  });
});

describe("metaForCall", () => {
  it("keeps the caller's capabilities but the tasks extension, and puts taskgate's progress token", () => {
    const meta = metaForCall(
      {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
          elicitation: {},
          extensions: { "io.modelcontextprotocol/tasks": {}, "com.example/other": {} },
        },
        progressToken: "theirs",
      },
      "ours",
    );
    assert.deepEqual(meta, {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": { elicitation: {}, extensions: { "com.example/other": {} } },
      progressToken: "ours",
    });
    const bare = metaForCall(
      { "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } } },
      "t",
    );
    assert.deepEqual(bare["io.modelcontextprotocol/clientCapabilities"], {});
  });

  it("puts no progress token when nobody reads the progress (and never passes the caller's on)", () => {
    const meta = metaForCall({ "io.modelcontextprotocol/clientCapabilities": {}, progressToken: "theirs" }, undefined);
    assert.deepEqual(meta, { "io.modelcontextprotocol/clientCapabilities": {} });
  });
});
