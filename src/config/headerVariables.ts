// `${NAME}` in upstream.headers values: secrets stay out of config files. Each reference is
// replaced with the environment variable's value; an unset (or empty) one is a problem naming the
// header, the variable and where the header was set.

import { formatPath, isPlainObject, type Raw, type Segment } from "./paths.js";

const VARIABLE_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Replaces each `${NAME}` in upstream.headers values with the variable's value; an unset (or empty) one is a problem naming it. */
export function expandHeaderVariables(
  merged: Raw,
  env: NodeJS.ProcessEnv,
  problems: string[],
  sourceOf: (path: Segment[]) => string,
): void {
  const upstream = merged.upstream;
  if (!isPlainObject(upstream) || !isPlainObject(upstream.headers)) return;
  const headers: Raw = {};
  for (const [name, value] of Object.entries(upstream.headers)) {
    if (typeof value !== "string") {
      headers[name] = value;
      continue;
    }
    headers[name] = value.replace(VARIABLE_REFERENCE, (reference, variable: string) => {
      const found = env[variable];
      if (found === undefined || found === "") {
        const path = ["upstream", "headers", name];
        problems.push(
          `${formatPath(path)}: environment variable ${variable} is not set (the value refers to ${reference})${sourceOf(path)}`,
        );
        return reference;
      }
      return found;
    });
  }
  merged.upstream = { ...upstream, headers };
}
