// The file layer: a .yaml/.yml/.json config file read into raw configuration data, with the
// parsed YAML tree kept so messages can name the line of an option. Problems are one line each,
// naming the file and, for syntax errors, the line and column.

import { readFileSync } from "node:fs";
import { extname } from "node:path";
import { type Document, isMap, isSeq, LineCounter, parseDocument } from "yaml";
import { isPlainObject, type Raw, type Segment, typeName } from "./paths.js";

export interface FileLayer {
  data: Raw;
  doc: Document;
  lines: LineCounter;
}

export function readConfigFile(file: string): FileLayer | { problem: string } {
  const ext = extname(file).toLowerCase();
  if (ext !== ".yaml" && ext !== ".yml" && ext !== ".json") {
    return { problem: `config file ${file}: unsupported extension "${ext}" (use .yaml, .yml or .json)` };
  }
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { problem: `config file not found: ${file}` };
    if (code === "EISDIR") return { problem: `config file ${file}: is a directory, not a file` };
    return { problem: `config file ${file}: cannot be read (${code ?? String(error)})` };
  }

  const lines = new LineCounter();
  let data: unknown;
  let doc: Document;
  if (ext === ".json") {
    try {
      data = JSON.parse(text);
    } catch (error) {
      return { problem: `config file ${file}: JSON syntax error ${jsonErrorWhere(text, error)}` };
    }
    // Valid JSON is valid YAML: parse it again only to know the line of each option for messages.
    doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
    // JSON.parse keeps the last of two equal keys without a word: a backend named twice is an error.
    const twice = backendDefinedTwice(doc, lines);
    if (twice) return { problem: `config file ${file}: ${twice}` };
  } else {
    doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
    const twice = backendDefinedTwice(doc, lines);
    if (twice) return { problem: `config file ${file}: ${twice}` };
    const [first] = doc.errors;
    if (first) {
      const { line, col } = lines.linePos(first.pos[0]);
      const message = first.message.split("\n")[0] ?? "invalid YAML";
      const more = doc.errors.length > 1 ? ` (and ${doc.errors.length - 1} more YAML error(s))` : "";
      return { problem: `config file ${file}: YAML syntax error at line ${line}, column ${col}: ${message}${more}` };
    }
    try {
      data = doc.toJS();
    } catch (error) {
      return { problem: `config file ${file}: YAML cannot be read: ${(error as Error).message}` };
    }
  }

  if (data === null || data === undefined) data = {}; // empty file: nothing set
  if (!isPlainObject(data)) {
    return { problem: `config file ${file}: the top level must be a mapping of options (got ${typeName(data)})` };
  }
  return { data, doc, lines };
}

/** "backends.<name>: defined twice (lines a and b) …" when two backends share a name, else undefined. */
function backendDefinedTwice(doc: Document, lines: LineCounter): string | undefined {
  const backends = isMap(doc.contents) ? doc.contents.get("backends", true) : undefined;
  if (!isMap(backends)) return undefined;
  const seen = new Map<string, number | undefined>();
  for (const item of backends.items) {
    const key = item.key as { value?: unknown; range?: [number, number, number] } | null;
    if (key === null || typeof key !== "object") continue;
    const name = String(key.value);
    const line = key.range ? lines.linePos(key.range[0]).line : undefined;
    if (seen.has(name)) {
      return `backends.${name}: defined twice (lines ${seen.get(name)} and ${line}): each backend needs a name of its own`;
    }
    seen.set(name, line);
  }
  return undefined;
}

function jsonErrorWhere(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const clean = message.replace(/\s*in JSON at position \d+.*$/s, "").replace(/\s*\(line \d+ column \d+\)/, "");
  const lineCol = /line (\d+) column (\d+)/.exec(message);
  if (lineCol) return `at line ${lineCol[1]}, column ${lineCol[2]}: ${clean}`;
  const position = /position (\d+)/.exec(message);
  if (position) {
    const before = text.slice(0, Number(position[1]));
    const line = before.split("\n").length;
    const col = before.length - before.lastIndexOf("\n");
    return `at line ${line}, column ${col}: ${clean}`;
  }
  return `: ${clean}`;
}

/** Line of the option at `path` in the file (its key for mapping entries), when the YAML tree has it. */
export function lineOf(layer: FileLayer, path: Segment[]): number | undefined {
  for (let length = path.length; length > 0; length--) {
    const parent = length === 1 ? layer.doc.contents : layer.doc.getIn(path.slice(0, length - 1), true);
    const last = path[length - 1];
    let offset: number | undefined;
    if (isMap(parent)) {
      const pair = parent.items.find((item) => {
        const key = item.key as { value?: unknown } | null;
        return key !== null && typeof key === "object" && String(key.value) === String(last);
      });
      offset = (pair?.key as { range?: [number, number, number] } | undefined)?.range?.[0];
    } else if (isSeq(parent) && typeof last === "number") {
      offset = (parent.items[last] as { range?: [number, number, number] } | undefined)?.range?.[0];
    }
    if (offset !== undefined) return layer.lines.linePos(offset).line;
  }
  return undefined;
}
