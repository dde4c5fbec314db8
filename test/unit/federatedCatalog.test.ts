import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mergeCatalog, routeResource } from "../../src/fleet/federatedCatalog.js";

describe("the federated catalog", () => {
  it("prefixes tools with their backend and routes each back to the backend's own name", () => {
    const merged = mergeCatalog(
      "tools",
      [
        { backend: "everything", items: [{ name: "echo", inputSchema: { type: "object" } }] },
        { backend: "files", items: [{ name: "read_file", description: "reads" }] },
      ],
      "__",
    );
    assert.deepEqual(
      merged.items.map((tool) => tool.name),
      ["everything__echo", "files__read_file"],
    );
    assert.deepEqual(merged.items[1], { name: "files__read_file", description: "reads" });
    assert.deepEqual(merged.routes.get("files__read_file"), { backend: "files", key: "read_file" });
    assert.deepEqual(merged.collisions, []);
    assert.deepEqual(merged.missing, []);
  });

  it("reports names that collide after prefixing and leaves the later one out", () => {
    // Backend "a" with tool "b__c" and backend "a__b"… cannot exist (names are [a-z0-9-]); a rewrite can collide though.
    const merged = mergeCatalog("tools", [{ backend: "x", items: [{ name: "read.file" }, { name: "read_file" }] }], "__");
    assert.deepEqual(
      merged.items.map((tool) => tool.name),
      ["x__read_file"],
    );
    assert.deepEqual(merged.routes.get("x__read_file"), { backend: "x", key: "read.file" });
    assert.deepEqual(merged.collisions, [{ kind: "tools", shown: "x__read_file", kept: "x", leftOut: "x", leftOutKey: "read_file" }]);
    assert.equal(merged.rewritten.length, 1);
  });

  it("keeps resources under their own URIs; a URI two backends list goes to the first, the later is reported", () => {
    const merged = mergeCatalog(
      "resources",
      [
        { backend: "everything", items: [{ uri: "test://static/resource/1", name: "Resource 1" }] },
        {
          backend: "files",
          items: [
            { uri: "file:///srv/a.txt", name: "a" },
            { uri: "test://static/resource/1", name: "shadow" },
          ],
        },
      ],
      "__",
    );
    assert.deepEqual(
      merged.items.map((resource) => resource.uri),
      ["test://static/resource/1", "file:///srv/a.txt"],
    );
    assert.equal(merged.items[0]?.name, "Resource 1");
    assert.deepEqual(merged.collisions, [
      {
        kind: "resources",
        shown: "test://static/resource/1",
        kept: "everything",
        leftOut: "files",
        leftOutKey: "test://static/resource/1",
      },
    ]);
  });

  it("leaves a backend that could not be asked out and says which and why", () => {
    const merged = mergeCatalog(
      "prompts",
      [
        { backend: "build", missing: "upstream_unreachable" },
        { backend: "everything", items: [{ name: "simple_prompt" }] },
      ],
      "__",
    );
    assert.deepEqual(
      merged.items.map((prompt) => prompt.name),
      ["everything__simple_prompt"],
    );
    assert.deepEqual(merged.missing, [{ backend: "build", reason: "upstream_unreachable" }]);
  });

  it("skips entries without a name (they could not be asked for again)", () => {
    const merged = mergeCatalog("tools", [{ backend: "x", items: [{ title: "nameless" }, { name: "ok" }] }], "__");
    assert.deepEqual([...merged.routes.keys()], ["x__ok"]);
  });

  it("routes a resource URI to the backend that listed it, else by the longest template head", () => {
    const resources = mergeCatalog("resources", [{ backend: "files", items: [{ uri: "file:///srv/a.txt" }] }], "__");
    const templates = mergeCatalog(
      "resourceTemplates",
      [
        { backend: "everything", items: [{ uriTemplate: "test://static/resource/{id}" }] },
        { backend: "deep", items: [{ uriTemplate: "test://static/resource/special/{id}" }] },
      ],
      "__",
    );
    assert.equal(routeResource("file:///srv/a.txt", resources, templates)?.backend, "files");
    assert.equal(routeResource("test://static/resource/7", resources, templates)?.backend, "everything");
    assert.equal(routeResource("test://static/resource/special/7", resources, templates)?.backend, "deep");
    assert.equal(routeResource("nope://x", resources, templates), undefined);
  });
});
