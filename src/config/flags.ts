// The command-line flags of the options that have one (declared with `flag:`): their spelling,
// their one-line description with the real default, how their text is read (the same rules as
// the environment's), and the overrides layer they make. The CLI hands these to commander.

import { boundsOf, choicesOf, defaultOf, entryOf, OPTIONS, type OptionEntry } from "./catalog.js";
import type { ConfigOverrides } from "./loadConfig.js";
import { formatPath, type Raw, setPath } from "./paths.js";
import { readText } from "./textValues.js";

export interface FlagSpec {
  entry: OptionEntry;
  /** As commander spells it: "--port <port>". */
  flags: string;
  /** The long name alone: "--port". */
  name: string;
  description: string;
  /** For integer options: reads and bounds-checks the text at once (commander's own error names the flag). */
  parseInteger?: (text: string) => number;
}

/** The first word of `flags`: "--port <port>" → "--port". */
const nameOf = (flags: string) => flags.split(/[ ,]/)[0] as string;

/** "--port" of the option at a dotted path, when it has a flag. */
export function flagOf(option: string): string | undefined {
  const flag = entryOf(option)?.meta.flag;
  return flag === undefined ? undefined : nameOf(flag);
}

/** The flag's description: "(required) " when it has no default, its help, the values it allows, its default. */
export function flagDescription(entry: OptionEntry): string {
  const found = defaultOf(entry);
  const choices = choicesOf(entry);
  const prefix = found.kind === "required" && !entry.meta.requiredUnless ? "(required) " : "";
  let tail = "";
  if (entry.meta.requiredUnless) tail = ` (this or ${flagOf(entry.meta.requiredUnless) ?? entry.meta.requiredUnless})`;
  else if (entry.meta.defaultText) tail = ` (default: ${entry.meta.defaultText})`;
  else if (found.kind === "value") tail = ` (default: ${Array.isArray(found.value) ? found.value.join(",") : String(found.value)})`;
  return `${prefix}${entry.meta.help}${choices ? `: ${choices.join(" | ")}` : ""}${tail}`;
}

function integerParser(entry: OptionEntry): (text: string) => number {
  const { min, max } = boundsOf(entry);
  const range = min !== undefined && max !== undefined ? ` from ${min} to ${max}` : min !== undefined ? ` of at least ${min}` : "";
  return (text) => {
    const read = readText("int", text.trim());
    const value = "value" in read ? (read.value as number) : Number.NaN;
    if (!Number.isSafeInteger(value) || (min !== undefined && value < min) || (max !== undefined && value > max)) {
      throw new Error(`must be an integer${range}`);
    }
    return value;
  };
}

function specOf(entry: OptionEntry): FlagSpec {
  const flags = entry.meta.flag as string;
  const spec: FlagSpec = { entry, flags, name: nameOf(flags), description: flagDescription(entry) };
  if (entry.kind === "int") spec.parseInteger = integerParser(entry);
  return spec;
}

/** Every option's flag, in the schema's order. */
export const FLAGS: readonly FlagSpec[] = OPTIONS.filter((entry) => entry.meta.flag !== undefined).map(specOf);

/** The flags of these options only (e.g. the demo's). */
export const flagsFor = (options: readonly string[]): FlagSpec[] => FLAGS.filter((spec) => options.includes(spec.entry.option));

/** Flag names by dotted option path, for loadConfig's messages ("(from flag --port)"). */
export const FLAG_NAMES: Readonly<Record<string, string>> = Object.fromEntries(FLAGS.map((spec) => [spec.entry.option, spec.name]));

/**
 * The overrides layer from the values commander parsed (`givenFor(spec)`: undefined when the flag
 * was not given). Text is read like the environment's; a problem names the option and the flag.
 */
export function flagOverrides(
  specs: readonly FlagSpec[],
  givenFor: (spec: FlagSpec) => unknown,
): { overrides: ConfigOverrides; problems: string[] } {
  const overrides: Raw = {};
  const problems: string[] = [];
  for (const spec of specs) {
    const given = givenFor(spec);
    if (given === undefined) continue;
    if (typeof given !== "string") {
      setPath(overrides, spec.entry.path, given);
      continue;
    }
    const read = readText(spec.entry.kind, given.trim());
    if ("value" in read) setPath(overrides, spec.entry.path, read.value);
    else if ("problems" in read) {
      for (const { what, got, reason } of read.problems) {
        const detail = `${got !== undefined ? `, got ${JSON.stringify(got)}` : ""}${reason !== undefined ? `: ${reason}` : ""}`;
        problems.push(`${formatPath(spec.entry.path)}: ${what}${detail} (from ${spec.name})`);
      }
    }
  }
  return { overrides: overrides as ConfigOverrides, problems };
}
