// Turning zod issues into lines a person can act on: the option's path, what is wrong, the value
// (never for credentials), where the value came from (file and line, variable, flag) or, for a
// missing option, where it can be set; unknown keys get the allowed ones and a "did you mean".

import { z } from "zod";
import { ENV_ENTRIES, unwrap } from "./catalog.js";
import { closest } from "./didYouMean.js";
import { type FileLayer, lineOf } from "./fileLayer.js";
import type { Source } from "./merge.js";
import { formatPath, pathKey, quote, type Raw, type Segment, valueAt } from "./paths.js";
import { ConfigSchema } from "./schema.js";

export interface IssueContext {
  merged: Raw;
  provenance: Map<string, Source>;
  fileLayer: FileLayer | undefined;
}

type Issue = z.core.$ZodIssue;

export function describeIssue(issue: Issue, context: IssueContext): string[] {
  const path = issue.path.map((segment) => (typeof segment === "number" ? segment : String(segment)));
  if (issue.code === "unrecognized_keys") return issue.keys.map((key) => unknownKey(path, key, context));

  const pathText = formatPath(path);
  // A backend takes the upstream's options, whose checks speak of upstream.<option>: name the backend's own.
  const backend = path[0] === "backends" && typeof path[1] === "string" ? path[1] : undefined;
  const own = backend === undefined ? path : path.slice(2);
  let text = backend === undefined ? issue.message : issue.message.replace(/\bupstream\./g, `backends.${backend}.`);
  if (pathText && text.startsWith(`${pathText} `)) text = text.slice(pathText.length + 1);

  if (issue.code === "invalid_value" && text.startsWith("Invalid option")) {
    text = `must be one of ${issue.values.map(String).join(", ")}`;
  } else if (issue.code === "invalid_value" && !issue.values.every((value) => text.includes(String(value)))) {
    text += ` (allowed: ${issue.values.map(String).join(", ")})`;
  }

  const value = valueAt(context.merged, path);
  const missing = value === undefined && (issue.code === "invalid_type" || issue.code === "invalid_value");
  if (missing) {
    const detail = text.startsWith("Invalid input") ? "" : ` — ${text}`;
    return [`${pathText}: is required but not set${detail}${whereToSet(path)}`];
  }

  // Token hashes and upstream header values (credentials) are never echoed.
  const sensitive =
    (path[0] === "auth" && path[1] === "tokens") ||
    (path[0] === "upstream" && path[1] === "headers") ||
    (backend !== undefined && own[0] === "headers");
  if (!sensitive && (typeof value === "string" || typeof value === "number" || typeof value === "boolean")) {
    text += `, got ${typeof value === "string" ? quote(value) : String(value)}`;
  }
  const source = findSource(path, context);
  return [
    `${pathText || "(top level)"}: ${text}${source ? sourceSuffix(path, context) : whereToSet(path)}${alsoFrom(issue, path, context)}`,
  ];
}

function unknownKey(path: Segment[], key: string, context: IssueContext): string {
  const allowed = allowedKeysAt(path);
  const keyPath = [...path, key];
  const where = allowed ? ` (allowed ${path.length ? `in ${formatPath(path)}` : "at top level"}: ${allowed.join(", ")})` : "";
  const guess = allowed ? closest(key, allowed) : undefined;
  const hint = guess ? `; did you mean "${guess}"?` : "";
  return `${formatPath(keyPath)}: unknown option${hint}${where}${sourceSuffix(keyPath, context)}`;
}

/** For a clash of two options (`params.alsoFrom`: the other's key beside this one), where the other one was set. */
function alsoFrom(issue: Issue, path: Segment[], context: IssueContext): string {
  const others = issue.code === "custom" ? (issue.params as { alsoFrom?: string[] } | undefined)?.alsoFrom : undefined;
  return (others ?? [])
    .map((key) => {
      const otherPath = [...path.slice(0, -1), key];
      const found = sourceSuffix(otherPath, context);
      return found ? `; ${formatPath(otherPath)}${found.replace(/^ \(from (.*)\)$/, " is set in $1")}` : "";
    })
    .join("");
}

function whereToSet(path: Segment[]): string {
  // A backend's options live only in the config file (no variable or flag names a backend).
  if (path[0] === "backends") return " (set it in the config file)";
  const key = pathKey(path);
  const variable = ENV_ENTRIES.find((entry) => pathKey(entry.path) === key)?.variable;
  return ` (set it in the config file${variable ? `, with ${variable}` : ""} or with a flag)`;
}

function findSource(path: Segment[], context: IssueContext): { source: Source; at: Segment[] } | undefined {
  for (let length = path.length; length > 0; length--) {
    const at = path.slice(0, length);
    const source = context.provenance.get(pathKey(at));
    if (source) return { source, at };
  }
  return undefined;
}

export function sourceSuffix(path: Segment[], context: IssueContext): string {
  const found = findSource(path, context);
  if (!found) return "";
  const { source } = found;
  switch (source.kind) {
    case "env":
      return ` (from ${source.variable})`;
    case "flag":
      return source.flag ? ` (from flag ${source.flag})` : " (from command-line flags)";
    case "file": {
      const line = context.fileLayer ? lineOf(context.fileLayer, path) : undefined;
      return ` (from config file ${source.file}${line ? `, line ${line}` : ""})`;
    }
  }
}

/** Keys the schema allows in the object at `path` (for "unknown option" messages). */
function allowedKeysAt(path: Segment[]): string[] | undefined {
  let schema: z.ZodType | undefined = ConfigSchema;
  for (const segment of path) {
    const node: z.ZodType | undefined = schema ? unwrap(schema) : undefined;
    if (!(node instanceof z.ZodObject)) return undefined;
    schema = (node.shape as Record<string, z.ZodType | undefined>)[String(segment)];
  }
  const node = schema ? unwrap(schema) : undefined;
  return node instanceof z.ZodObject ? Object.keys(node.shape) : undefined;
}
