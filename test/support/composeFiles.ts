// What a Compose file means, read without a container engine (none runs here): the services as
// parsed (YAML merge keys applied) and Compose's own interpolation of a value, so tests can load
// each taskgate service's configuration with taskgate's loader exactly as the container would.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { parse } from "yaml";

export interface ComposeService {
  build?: unknown;
  image?: string;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }> | string[];
  healthcheck?: { disable?: boolean };
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

export function readCompose(path: string): ComposeFile {
  return parse(readFileSync(path, "utf8"), { merge: true }) as ComposeFile;
}

/**
 * Compose interpolation of one value, as `docker compose` does it: ${NAME}, ${NAME:-default} and
 * ${NAME:?message} (required). `given` plays the operator's shell; `required` collects the names.
 */
export function interpolate(value: string, given: Record<string, string>, required = new Set<string>()): string {
  return value.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:-|:\?)([^}]*))?\}/g,
    (match, name: string | undefined, op?: string, arg?: string) => {
      if (match === "$$") return "$";
      const set = name !== undefined ? given[name] : undefined;
      if (op === ":?") {
        required.add(name as string);
        assert.ok(set, `${name} is required: ${arg}`);
        return set;
      }
      if (op === ":-") return set || (arg ?? "");
      assert.ok(set !== undefined, `${name} has neither a value nor a default`);
      return set;
    },
  );
}

/** A service's environment as its container sees it: the image's variables, then its own, interpolated. */
export function serviceEnv(
  service: ComposeService,
  imageEnv: Record<string, string>,
  given: Record<string, string>,
  required = new Set<string>(),
): Record<string, string> {
  const env: Record<string, string> = { ...imageEnv };
  for (const [name, raw] of Object.entries(service.environment ?? {})) env[name] = interpolate(String(raw), given, required);
  return env;
}
