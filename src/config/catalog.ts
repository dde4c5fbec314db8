// The catalogue of options: ConfigSchema walked once, each declared option with its dotted path,
// its environment variable (if any), how that variable's text is read, its flag, its help and
// its default as a person reads it. The environment table, the flag list, `serve --help` and
// docs/configuration.md are all made from this list, so none of them can drift from the schema.

import { z } from "zod";
import { DECLARATIONS, type Declared, type OptionMeta, type SectionMeta, screamingSnake, type TextKind } from "./declaration.js";
import { ConfigSchema } from "./schema.js";

export interface OptionEntry {
  /** Dotted path, e.g. "upstream.maxSessions". */
  option: string;
  path: readonly string[];
  /** The TASKGATE_* variable, when the option has one. */
  variable?: string;
  /** How the variable's (and the flag's) text is read. */
  kind: TextKind;
  meta: OptionMeta;
  /** The option's schema, wrappers (default, optional) included. */
  schema: z.ZodType;
  /** The innermost value schema (an enum's values, a number's bounds). */
  base: z.ZodType;
  /** The section the option belongs to ("" for top-level options). */
  section: string;
}

export interface SectionEntry {
  /** Dotted path of the block ("auth.jwt"); "" for the top level. */
  section: string;
  meta: SectionMeta;
}

type Wrapper = { type?: string; innerType?: z.ZodType; out?: z.ZodType; in?: z.ZodType };

/** The next schema inside a wrapper (default, prefault, optional, a preprocess pipe's output), or undefined. */
function innerOf(schema: z.ZodType): z.ZodType | undefined {
  const def = schema._zod.def as Wrapper;
  if (def.type === "object" || def.type === "array" || def.type === "record") return undefined;
  if (def.innerType) return def.innerType;
  if (def.type === "pipe") return def.out?._zod.def.type === "transform" ? def.in : def.out;
  return undefined;
}

/** Peels wrappers down to the value schema (an object, array, enum, number, …). */
export function unwrap(schema: z.ZodType): z.ZodType {
  let node = schema;
  for (let inner = innerOf(node); inner; inner = innerOf(node)) node = inner;
  return node;
}

/** The declaration of `schema`: on it or on any wrapper inside it (`JwtSchema.optional()` is declared by JwtSchema). */
function declarationOf(schema: z.ZodType): Declared | undefined {
  for (let node: z.ZodType | undefined = schema; node; node = innerOf(node)) {
    const found = DECLARATIONS.get(node);
    if (found) return found;
  }
  return undefined;
}

function kindOf(base: z.ZodType, meta: OptionMeta): TextKind {
  if (meta.read) return meta.read;
  const type = base._zod.def.type;
  if (type === "number") return "int";
  if (type === "boolean") return "bool";
  if (type === "array") return "list";
  return "string";
}

interface Walk {
  options: OptionEntry[];
  sections: SectionEntry[];
  undeclared: string[];
}

function walk(schema: z.ZodType, path: string[], envSegments: string[], into: Walk): void {
  const declared = declarationOf(schema);
  const base = unwrap(schema);
  if (declared?.kind === "option") {
    const { kind: _kind, ...meta } = declared;
    const entry: OptionEntry = {
      option: path.join("."),
      path,
      kind: kindOf(base, meta),
      meta,
      schema,
      base,
      section: path.slice(0, -1).join("."),
    };
    const last = path[path.length - 1] as string;
    if (meta.env !== false) entry.variable = ["TASKGATE", ...envSegments, meta.env ?? screamingSnake(last)].join("_");
    into.options.push(entry);
    return;
  }
  if (!(base instanceof z.ZodObject)) {
    into.undeclared.push(path.join("."));
    return;
  }
  if (declared?.kind === "section" || path.length === 0) {
    into.sections.push({ section: path.join("."), meta: declared?.kind === "section" ? declared : { help: "" } });
  }
  for (const [key, child] of Object.entries(base.shape as Record<string, z.ZodType>)) {
    const childDeclared = declarationOf(child);
    const segment = childDeclared?.kind === "section" && childDeclared.env !== undefined ? childDeclared.env : screamingSnake(key);
    const childSegments =
      unwrap(child) instanceof z.ZodObject && childDeclared?.kind !== "option" ? [...envSegments, segment] : envSegments;
    walk(
      child,
      [...path, key],
      childSegments.filter((part) => part !== ""),
      into,
    );
  }
}

/** Walks a config schema into its catalogue. Every leaf must be declared with option(): a missing one is listed. */
export function catalogOf(schema: z.ZodType): Walk {
  const into: Walk = { options: [], sections: [], undeclared: [] };
  walk(schema, [], [], into);
  return into;
}

const CATALOG = catalogOf(ConfigSchema);

/** Every option of taskgate, in the schema's order. */
export const OPTIONS: readonly OptionEntry[] = CATALOG.options;
/** Every block of options (the top level first, as ""). */
export const SECTIONS: readonly SectionEntry[] = CATALOG.sections;
/** Leaves of the schema without a declaration (a test keeps this empty). */
export const UNDECLARED: readonly string[] = CATALOG.undeclared;

/** The options that have an environment variable. */
export const ENV_ENTRIES: readonly (OptionEntry & { variable: string })[] = OPTIONS.filter(
  (entry): entry is OptionEntry & { variable: string } => entry.variable !== undefined,
);

/** The values an option allows, when it is an enum. */
export function choicesOf(entry: OptionEntry): readonly string[] | undefined {
  return entry.base instanceof z.ZodEnum ? (entry.base.options as string[]).map(String) : undefined;
}

/** Integer bounds of an option (for "must be an integer from 0 to 65535"). */
export function boundsOf(entry: OptionEntry): { min?: number; max?: number } {
  if (!(entry.base instanceof z.ZodNumber)) return {};
  const { minValue, maxValue } = entry.base;
  const bounds: { min?: number; max?: number } = {};
  if (minValue !== null && Number.isFinite(minValue)) bounds.min = minValue;
  if (maxValue !== null && Number.isFinite(maxValue) && maxValue < Number.MAX_SAFE_INTEGER) bounds.max = maxValue;
  return bounds;
}

/** What an option is when nobody sets it: its default value, nothing (optional), or required. */
export type DefaultOf = { kind: "value"; value: unknown } | { kind: "none" } | { kind: "required" };

export function defaultOf(entry: OptionEntry): DefaultOf {
  const parsed = entry.schema.safeParse(undefined);
  if (!parsed.success) return { kind: "required" };
  return parsed.data === undefined ? { kind: "none" } : { kind: "value", value: parsed.data };
}

/** The entry of a dotted option path. */
export function entryOf(option: string): OptionEntry | undefined {
  return OPTIONS.find((entry) => entry.option === option);
}
