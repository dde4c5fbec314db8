// Writes docs/configuration.md from the option declarations (src/config/reference.ts renders it).
// Run it after changing an option: `npm run docs:config`. A test fails while the file is stale.

import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { renderReference } from "../src/config/reference.js";

const target = join(dirname(fileURLToPath(import.meta.url)), "..", "docs", "configuration.md");
writeFileSync(target, renderReference());
process.stdout.write(`wrote ${target}\n`);
