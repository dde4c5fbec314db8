// The names of a fleet: a backend's name is a path segment (`/mcp/<name>`), and the federated
// endpoint shows each backend's tools and prompts as `<backend><separator><name>`. Contract:
//
// - A backend name is 1..MAX_BACKEND_NAME characters of [a-z0-9-], starting with a letter or a
//   digit (so it is a path segment, a metric label and a log field as it stands).
// - A separator is 1..MAX_SEPARATOR characters of [A-Za-z0-9_-] with at least one character a
//   backend name cannot hold (`_` or an upper-case letter): the backend is then always the text
//   before the first separator, so two backends can never produce the same prefix.
// - A federated name keeps to the MCP tool-name rules and the limit clients commonly enforce:
//   at most MAX_FEDERATED_NAME characters of [A-Za-z0-9_-]. A backend's own name that would not
//   fit is rewritten, deterministically (the same name every time, on every instance): each
//   character outside [A-Za-z0-9_-] becomes `_`, and a name still too long keeps its head and ends
//   with `_` and 8 hex digits of the original's sha256. A rewritten name is reported (`rewritten`),
//   and two names that end up equal are a collision the catalog reports (never one shadowing the
//   other); the federated endpoint routes by its table, never by parsing the name back.

import { createHash } from "node:crypto";

export const MAX_BACKEND_NAME = 32;
export const MAX_SEPARATOR = 8;
/** The longest tool name common clients accept (e.g. OpenAI and Anthropic function names). */
export const MAX_FEDERATED_NAME = 64;

const BACKEND_NAME = /^[a-z0-9][a-z0-9-]*$/;
const SEPARATOR = /^[A-Za-z0-9_-]+$/;
const NAME_CHARACTER = /[A-Za-z0-9_-]/;
const HASH_DIGITS = 8;

/** Why `name` cannot be a backend name, or undefined when it can. */
export function backendNameProblem(name: string): string | undefined {
  if (name.length === 0) return "a backend name must not be empty";
  if (name.length > MAX_BACKEND_NAME) return `a backend name has at most ${MAX_BACKEND_NAME} characters ('${name}' has ${name.length})`;
  if (!BACKEND_NAME.test(name)) {
    return (
      `'${name}' is not a backend name: use lower-case letters, digits and '-' ` +
      "(it is a path segment, /mcp/<name>), starting with a letter or digit"
    );
  }
  return undefined;
}

/** Why `separator` cannot join backend and tool names, or undefined when it can. */
export function separatorProblem(separator: string): string | undefined {
  if (separator.length === 0 || separator.length > MAX_SEPARATOR) return `must be 1 to ${MAX_SEPARATOR} characters`;
  if (!SEPARATOR.test(separator)) {
    return (
      `'${separator}' would make names that break the tool-name rules (64 characters of A-Z a-z 0-9 _ -): ` +
      'use only those characters, e.g. "__"'
    );
  }
  if (!/[_A-Z]/.test(separator)) {
    return (
      `'${separator}' could also occur inside a backend name ([a-z0-9-]), so names would be ambiguous: ` +
      `include '_' or an upper-case letter, e.g. "__"`
    );
  }
  return undefined;
}

export interface FederatedName {
  /** The name clients see on the federated endpoint. */
  name: string;
  /** Why the backend's own name could not be used as it is (invalid characters, too long). */
  rewritten?: string;
}

/** `<backend><separator><name>`, within MAX_FEDERATED_NAME characters of [A-Za-z0-9_-]. */
export function federatedName(backend: string, separator: string, name: string): FederatedName {
  const prefix = `${backend}${separator}`;
  const cleaned = [...name].map((character) => (NAME_CHARACTER.test(character) ? character : "_")).join("");
  const problems: string[] = [];
  if (cleaned !== name) problems.push("characters outside A-Z a-z 0-9 _ - became '_'");
  if (prefix.length + cleaned.length <= MAX_FEDERATED_NAME && name.length > 0) {
    return { name: prefix + cleaned, ...(problems.length > 0 ? { rewritten: problems.join("; ") } : {}) };
  }
  const digest = createHash("sha256").update(name).digest("hex").slice(0, HASH_DIGITS);
  const room = Math.max(0, MAX_FEDERATED_NAME - prefix.length - HASH_DIGITS - 1);
  problems.push(`longer than ${MAX_FEDERATED_NAME} characters with its prefix: shortened, ending in a hash of the original`);
  return { name: `${prefix}${cleaned.slice(0, room)}_${digest}`, rewritten: problems.join("; ") };
}
