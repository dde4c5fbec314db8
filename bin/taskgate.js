#!/usr/bin/env node
// The installed `taskgate` command. It runs the compiled CLI (dist/src/cli.js) and nothing else:
// the npm package and the Docker image carry dist/ (built by `npm pack`'s prepack), never the
// TypeScript sources or tsx. In a source checkout, run `npm run build` first, or run the sources
// directly with `node --import tsx src/cli.ts` while editing.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const compiled = join(root, "dist", "src", "cli.js");
if (!existsSync(compiled)) {
  process.stderr.write(
    `taskgate: ${compiled} is missing. In a source checkout, build it with \`npm run build\` ` +
      "(or run the sources with `node --import tsx src/cli.ts`).\n",
  );
  process.exit(1);
}
await import(pathToFileURL(compiled).href);
