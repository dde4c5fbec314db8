// Glob patterns, the one way access rules and approvals name things (tools, prompts, resource URIs,
// subjects, scopes, claim values): picomatch, compiled once per list. `*` matches within a path
// segment (a URI's `/` separates them: `example://**` for everything under it), `{a,b}` and `?`
// as in a shell; a pattern without special characters matches only itself.

import picomatch from "picomatch";

export type Matcher = (value: string) => boolean;

const NOTHING: Matcher = () => false;

/** One matcher for a list of patterns: true when any of them matches. Undefined or empty: nothing matches. */
export function matcherOf(patterns: readonly string[] | undefined): Matcher {
  if (!patterns || patterns.length === 0) return NOTHING;
  const match = picomatch([...patterns], { dot: true });
  return (value) => match(value);
}
