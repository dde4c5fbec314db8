// The folder layout is the architecture: each folder of src/ may import only from the folders
// below it in LAYERS (type imports included), so no folder ever imports one that imports it.
// The import graph comes from madge over the TypeScript sources.

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import madge from "madge";
import { REPO } from "../support/repoRoot.js";

/** Top to bottom. A file directly in src/ is its own layer (named after the file). */
const LAYERS = [
  "cli",
  "gateway",
  "fleet",
  "parts",
  "inventory",
  "http",
  "methods",
  "subscriptions",
  "calls",
  "access",
  "notify",
  "tasks",
  "cluster",
  "upstream",
  "questions",
  "auth",
  "config",
  "observability",
  "protocol",
  "util",
];

const layerOf = (file: string): string => {
  const parts = file.split(/[\\/]/);
  return parts.length > 1 ? parts[0]! : parts[0]!.replace(/\.ts$/, "");
};

test("folders of src/ import only the layers below them, so no folder loop exists; methods/ uses calls/ only through the call owner", async () => {
  const graph = (await madge(join(REPO, "src"), { fileExtensions: ["ts"], detectiveOptions: { ts: { skipTypeImports: false } } })).obj();
  assert.ok(Object.keys(graph).length > 50, "madge read the sources");
  const problems: string[] = [];
  const folderEdges = new Map<string, Set<string>>();
  for (const [file, imports] of Object.entries(graph)) {
    const from = layerOf(file);
    for (const target of imports) {
      if (target.startsWith("..")) {
        problems.push(`${file} imports ${target}, outside src/`);
        continue;
      }
      const to = layerOf(target);
      if (to === from) continue;
      if (!folderEdges.has(from)) folderEdges.set(from, new Set());
      folderEdges.get(from)!.add(to);
      const [above, below] = [LAYERS.indexOf(from), LAYERS.indexOf(to)];
      if (above === -1 || below === -1) problems.push(`${file} → ${target}: add the folder to LAYERS in test/unit/layers.test.ts`);
      else if (below <= above) problems.push(`${file} imports ${target}: ${from}/ may only use layers below it`);
    }
  }
  assert.deepEqual(problems, []);
  assert.ok((folderEdges.get("http")?.size ?? 0) > 0, "the graph has folder edges");
  // One owner for a call's life: the handlers use nothing of calls/ but the call owner.
  const intoCalls = Object.entries(graph).flatMap(([file, imports]) =>
    layerOf(file) === "methods" ? imports.filter((target) => layerOf(target) === "calls").map((target) => `${file} → ${target}`) : [],
  );
  assert.ok(intoCalls.length > 0, "the handlers open calls");
  assert.deepEqual(
    intoCalls.filter((edge) => !edge.endsWith("calls/callDesk.ts")),
    [],
    "methods/ imports only calls/callDesk.ts of calls/",
  );
});
