// The bench runs what ships: taskgate compiled by tsc (as `npm run build`, the Docker image and the
// npm package run it), and so the floors and every other process too, all from one build of src/,
// bench/ and examples/ into .bench-build/. Under tsx each function would carry esbuild's keepNames
// wrapper (a defineProperty per closure made), a cost users never pay, and it falls unevenly on
// code with many closures. BENCH_BUILD=source runs everything under tsx instead (no build step).

import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { oneOf } from "./knobs.js";

export type BenchBuild = "compiled" | "source";
export const benchBuild = (): BenchBuild => oneOf("BENCH_BUILD", ["compiled", "source"] as const, "compiled");

const ROOT = process.cwd();
/** Where the build goes and is run from (BENCH_BUILD_DIR, read per use: two builds can be compared in one run). */
const buildDir = () => process.env.BENCH_BUILD_DIR || join(ROOT, ".bench-build");

let built = false;

/** Compiles src/, bench/ and examples/ once per run (a few seconds), before the first process starts; throws
 *  with tsc's output when it fails. */
export function buildOnce(): void {
  if (built || benchBuild() === "source") return;
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  try {
    execFileSync(process.execPath, [tsc, "-p", join(ROOT, "tsconfig.bench.json"), "--outDir", buildDir()], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (error) {
    const output = (error as { stdout?: Buffer }).stdout?.toString() ?? String(error);
    throw new Error(`tsc -p tsconfig.bench.json failed:\n${output.slice(0, 2000)}`);
  }
  built = true;
}

/** The flags that preload bench/<file> (a .ts path under bench/) into a process: its compiled .js (the compiled build only). */
export function preloadFlags(benchFile: string): string[] {
  if (benchBuild() === "source") throw new Error(`preloading ${benchFile} needs the compiled build (unset BENCH_BUILD=source)`);
  return ["--import", pathToFileURL(compiled(benchFile)).href];
}

/** Where the build puts bench/<file>'s compiled .js. */
const compiled = (benchFile: string) => join(buildDir(), "bench", benchFile.replace(/\.ts$/, ".js"));

/** How to run bench/<file> (a .ts path under bench/): node on its compiled .js, or node --import tsx on the source. */
export function nodeArgsFor(benchFile: string): string[] {
  if (benchBuild() === "source") return ["--import", "tsx", join(ROOT, "bench", benchFile)];
  return [compiled(benchFile)];
}
