// Node arguments that load one of our own TypeScript fixtures (test/support/fixtures/) in a child process,
// the way the tests themselves run: the compiled .js when the tests were built into .test-build/
// (npm test), else the .ts source through tsx (node --import tsx --test …).

import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { BUILD_ROOT } from "./repoRoot.js";

function fixtureFile(name: string): { file: string; compiled: boolean } {
  const compiled = join(BUILD_ROOT, "test", "support", "fixtures", `${name}.js`);
  if (existsSync(compiled)) return { file: compiled, compiled: true };
  const source = join(BUILD_ROOT, "test", "support", "fixtures", `${name}.ts`);
  if (!existsSync(source)) throw new Error(`test fixture '${name}' not found (looked for ${compiled} and ${source})`);
  return { file: source, compiled: false };
}

/** `--import` arguments that preload test/support/fixtures/<name> before the child's main module. */
export function preloadArgs(name: string): string[] {
  const { file, compiled } = fixtureFile(name);
  return [...(compiled ? [] : ["--import", "tsx"]), "--import", pathToFileURL(file).href];
}

/** Arguments that run test/support/fixtures/<name> as the child's main module. */
export function mainArgs(name: string): string[] {
  const { file, compiled } = fixtureFile(name);
  return compiled ? [file] : ["--import", "tsx", file];
}
