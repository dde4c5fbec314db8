// Keeps the user documentation honest where that is cheap to check: the README stays a door (at
// most 300 lines), every relative link in README.md and docs/ reaches a file that exists (and a
// heading there, when it names one), the log-event table lists every event the code writes, and
// no page speaks of issue numbers or of files the repository does not have.

import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { REPO } from "../support/repoRoot.js";

/** The .md files under `dir`, recursively. */
function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith(".md") ? [path] : [];
  });
}

const README = join(REPO, "README.md");
const PAGES = [README, ...markdownUnder(join(REPO, "docs"))];

/** Text outside fenced code blocks and inline code, where links and prose live. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "``");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces become hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

function anchorsOf(file: string): Set<string> {
  const headings = readFileSync(file, "utf8")
    .replace(/^```[\s\S]*?^```/gm, "")
    .split("\n")
    .filter((line) => /^#{1,6} /.test(line))
    .map((line) => anchorOf(line.replace(/^#+ /, "")));
  const seen = new Map<string, number>();
  return new Set(
    headings.map((anchor) => {
      const n = seen.get(anchor) ?? 0;
      seen.set(anchor, n + 1);
      return n === 0 ? anchor : `${anchor}-${n}`;
    }),
  );
}

/** Every [text](target) link whose target is not a URL. */
function relativeLinks(file: string): string[] {
  const targets = [...prose(readFileSync(file, "utf8")).matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] as string);
  return targets.filter((target) => !/^[a-z]+:/i.test(target));
}

describe("user documentation", () => {
  it("README.md is a door: at most 300 lines", () => {
    const lines = readFileSync(README, "utf8").split("\n").length;
    assert.ok(lines <= 300, `README.md has ${lines} lines; move detail to docs/`);
  });

  it("every relative link in README.md and docs/ reaches an existing file and heading", () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const link of relativeLinks(page)) {
        const [path = "", anchor] = link.split("#");
        const target = path === "" ? page : resolve(dirname(page), decodeURIComponent(path));
        const where = `${relative(REPO, page)}: ${link}`;
        if (!existsSync(target)) broken.push(`${where} (no such file)`);
        else if (anchor && target.endsWith(".md") && !anchorsOf(target).has(anchor)) broken.push(`${where} (no such heading)`);
      }
    }
    assert.deepEqual(broken, []);
  });

  it("the log-event table lists every event the code writes", () => {
    const emitted = new Set<string>();
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith(".ts")) {
          for (const match of readFileSync(path, "utf8").matchAll(/event: "([a-z_.]+)"/g)) emitted.add(match[1] as string);
        }
      }
    };
    walk(join(REPO, "src"));
    assert.ok(emitted.size > 50, `found only ${emitted.size} events in src/: did the way events are written change?`);
    const page = readFileSync(join(REPO, "docs", "metrics-and-logs.md"), "utf8");
    const documented = new Set([...page.matchAll(/`([a-z_]+(?:\.[a-z_]+)*)`/g)].map((match) => match[1] as string));
    const missing = [...emitted].filter((event) => !documented.has(event)).sort();
    assert.deepEqual(missing, [], "events written by src/ but missing from docs/metrics-and-logs.md");
  });

  it("speaks of the product: no issue numbers, no files the repository lacks", () => {
    const found: string[] = [];
    for (const page of PAGES) {
      const text = readFileSync(page, "utf8");
      for (const match of text.matchAll(/\bissues?\s+#?\d+|\bDESIGN\.md\b/gi)) found.push(`${relative(REPO, page)}: ${match[0]}`);
    }
    assert.deepEqual(found, []);
  });
});
