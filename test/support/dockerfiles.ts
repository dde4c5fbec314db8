// What a Dockerfile gives its containers, read from the file (no container engine runs here):
// the default command (CMD in exec form) and the TASKGATE_* variables its ENV lines set, which
// the images built from it carry into every command they run.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "./repoRoot.js";

const read = (path: string) => readFileSync(join(REPO, path), "utf8");

/** The CMD in exec form of the Dockerfile at `path` (relative to the repository). */
export function dockerCmd(path = "Dockerfile"): string[] {
  const line = read(path)
    .split("\n")
    .find((text) => text.startsWith("CMD "));
  assert.ok(line, `${path} has a CMD`);
  return JSON.parse(line.slice(4)) as string[];
}

/** The TASKGATE_* variables set by `ENV NAME=value` / `ENV NAME="value"` lines of the Dockerfile at `path`. */
export function dockerTaskgateEnv(path = "Dockerfile"): Record<string, string> {
  const env: Record<string, string> = {};
  for (const match of read(path).matchAll(/^ENV (TASKGATE_[A-Z_]+)=(?:"([^"]*)"|(\S+))$/gm)) {
    env[match[1] as string] = match[2] ?? match[3] ?? "";
  }
  return env;
}
