// The repository's root, whether a test runs from test/ (tsx) or compiled from .test-build/test/.

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));

/** The tree the tests were built into: the repository, or .test-build/ when compiled. */
export const BUILD_ROOT = join(HERE, "..", "..");

/** The repository itself (package.json, config/, src/*.ts). */
export const REPO = [BUILD_ROOT, join(BUILD_ROOT, "..")].find((dir) => existsSync(join(dir, "package.json")))!;
