// The configuration part of `serve --help`, made from the catalogue: every TASKGATE_* variable
// with its option and its real default (or what makes it required), PORT beside TASKGATE_PORT,
// and the options only a config file can set. Flags describe themselves (flags.ts).

import { defaultOf, ENV_ENTRIES, OPTIONS, type OptionEntry } from "./catalog.js";
import type { TextKind } from "./declaration.js";
import { PORT_VARIABLE } from "./envLayer.js";

const KIND_NOTES: Partial<Record<TextKind, string>> = {
  list: "comma-separated",
  tokens: "sha256hex:subject,…",
  command: "a command line, split like a shell does (quotes, no variables)",
};

/** "default: 3000", "default: none", "required", "required unless upstream.command is set", "default: random per start". */
export function defaultHelp(entry: OptionEntry): string {
  if (entry.meta.requiredUnless) return `required unless ${entry.meta.requiredUnless} is set`;
  const text = entry.meta.defaultText;
  if (text !== undefined) return text.startsWith("required") ? text : `default: ${text}`;
  const found = defaultOf(entry);
  if (found.kind === "required") return "required";
  if (found.kind === "none") return "default: none";
  const { value } = found;
  if (Array.isArray(value)) return value.length === 0 ? "default: none" : `default: ${value.join(",")}`;
  if (typeof value === "object" && value !== null)
    return Object.keys(value).length === 0 ? "default: none" : `default: ${JSON.stringify(value)}`;
  return `default: ${String(value)}`;
}

/** The environment table: one row per variable, aligned; TASKGATE_CONFIG first, PORT after TASKGATE_PORT. */
export function environmentHelp(): string {
  const rows: Array<[string, string]> = [["TASKGATE_CONFIG", "the config file (like --config)"]];
  for (const entry of ENV_ENTRIES) {
    const notes = [KIND_NOTES[entry.kind], defaultHelp(entry)].filter(Boolean).join("; ");
    rows.push([entry.variable, `${entry.option} (${notes})`]);
    if (entry.option === "port") rows.push([PORT_VARIABLE, "port, when TASKGATE_PORT is not set"]);
  }
  const width = Math.max(...rows.map(([name]) => name.length)) + 2;
  return rows.map(([name, text]) => `  ${name.padEnd(width)}${text}`).join("\n");
}

/** The options without a variable: the config file sets them. */
export function fileOnlyHelp(): string {
  return OPTIONS.filter((entry) => entry.variable === undefined)
    .map((entry) => `  ${entry.option} (${defaultHelp(entry)})`)
    .join("\n");
}
