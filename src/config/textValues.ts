// How the text of an environment variable or a flag becomes an option's value: as is, a whole
// number, true/false, a comma list, a command line split like a shell does, or token entries
// `sha256hex:subject,…`. Problems are phrased without the variable or flag, which the caller adds.

import { splitCommandLine } from "./commandLine.js";
import type { TextKind } from "./declaration.js";

/** What went wrong: `what` ("must be an integer"), and either the text itself or the reason. */
export interface TextProblem {
  what: string;
  /** The offending text, quoted in the message (never for token entries: they may be secrets). */
  got?: string;
  /** Why, when the text cannot be shown or the reason is more useful. */
  reason?: string;
}

export type TextValue = { value: unknown } | { unset: true } | { problems: TextProblem[] };

export const splitList = (text: string) =>
  text
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");

/** `text` (already trimmed) read as `kind`. Empty text sets nothing, except a list, which it empties. */
export function readText(kind: TextKind, text: string): TextValue {
  if (text === "" && kind !== "list") return { unset: true };
  switch (kind) {
    case "string":
      return { value: text };
    case "int":
      if (!/^[+-]?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) return { problems: [{ what: "must be an integer", got: text }] };
      return { value: Number(text) };
    case "bool":
      if (!/^(true|false)$/i.test(text)) return { problems: [{ what: "must be true or false", got: text }] };
      return { value: text.toLowerCase() === "true" };
    case "list":
      return { value: splitList(text) };
    case "command":
      try {
        return { value: splitCommandLine(text) };
      } catch (error) {
        return { problems: [{ what: "cannot be read as a command line", reason: (error as Error).message }] };
      }
    case "tokens":
      return readTokens(text);
  }
}

function readTokens(text: string): TextValue {
  const tokens: { sha256: string; subject: string }[] = [];
  const problems: TextProblem[] = [];
  splitList(text).forEach((entry, index) => {
    const colon = entry.indexOf(":");
    const sha256 = entry.slice(0, colon).trim();
    const subject = entry.slice(colon + 1).trim();
    // The entry itself is not echoed: it might be a raw secret pasted by mistake.
    if (colon < 0 || sha256 === "" || subject === "") problems.push({ what: `entry ${index + 1} must be "sha256hex:subject"` });
    else tokens.push({ sha256, subject });
  });
  return problems.length > 0 ? { problems } : { value: tokens };
}
