// The vocabulary for declaring an option once: `option(zodSchema, meta)` attaches to the schema
// everything else taskgate says about the option (its one-line help, its environment variable,
// its flag, how its default reads), and `section(zodObject, meta)` does the same for a block of
// options. The schema stays an ordinary zod schema (types, defaults and checks unchanged); the
// metadata lives in one zod registry, which catalog.ts walks to produce the environment table,
// the flag list, `serve --help` and docs/configuration.md.
//
// Environment variable names are relative: a section contributes its key in SCREAMING_SNAKE
// (or its own `env` segment), an option its key (or its own `env`), so one section can be
// mounted in more than one place (the upstream options, reused per backend) without repeating.

import { z } from "zod";

/** How the text of an environment variable or flag becomes a value (see textValues.ts). */
export type TextKind = "string" | "int" | "bool" | "list" | "tokens" | "command";

export interface OptionMeta {
  /** One line: what the option does (in `serve --help`, the docs' Meaning column). */
  help: string;
  /** More for the configuration reference only: limits, interplay, what happens when it is exceeded. */
  details?: string;
  /** The variable's name after its section's prefix; default the key in SCREAMING_SNAKE. false: file only. */
  env?: string | false;
  /** How env/flag text is read when the schema's type does not say it (a command line, token entries). */
  read?: "command" | "tokens";
  /** The `serve` flag, as commander spells it: "--port <port>". */
  flag?: string;
  /** What the default is, when the schema's default does not say it ("random per start", "taskgate's"). */
  defaultText?: string;
  /** Required unless this other option (dotted path) is set: exactly one of the two. */
  requiredUnless?: string;
}

export interface SectionMeta {
  /** One line: what the block is for (a heading's sentence in docs/configuration.md). */
  help: string;
  /** The section's segment of its options' variable names; default the key in SCREAMING_SNAKE; "" adds none. */
  env?: string;
}

export type Declared = ({ kind: "option" } & OptionMeta) | ({ kind: "section" } & SectionMeta);

/** Every declaration, keyed by the (outermost) schema it describes. */
export const DECLARATIONS = z.registry<Declared>();

/** Declares an option: returns `schema` itself, its metadata registered. Call it last (zod methods make new schemas). */
export function option<T extends z.ZodType>(schema: T, meta: OptionMeta): T {
  DECLARATIONS.add(schema as z.ZodType, { kind: "option", ...meta });
  return schema;
}

/** Declares a block of options (a zod object, possibly with a default or optional). */
export function section<T extends z.ZodType>(schema: T, meta: SectionMeta): T {
  DECLARATIONS.add(schema as z.ZodType, { kind: "section", ...meta });
  return schema;
}

/** `maxSessions` → `MAX_SESSIONS`. */
export const screamingSnake = (key: string) => key.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase();
