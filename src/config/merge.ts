// Merging layers with provenance: each layer is deep-merged onto the ones before it (plain
// objects merge, lists and values replace), recording which layer set every option and every
// value a later layer replaced. The report says so by name, never by value (values may be secrets).

import { isPlainObject, pathKey, type Raw, type Segment } from "./paths.js";

export type Source = { kind: "file"; file: string } | { kind: "env"; variable: string } | { kind: "flag"; flag?: string | undefined };

/** What loadConfigWithReport tells besides the Config. Names only, never values (they may be secrets). */
export interface ConfigReport {
  /** The config file read, if any. */
  file?: string;
  /** Options set by each layer above the defaults, as "option (source)" for env and flags. */
  fromFile: string[];
  fromEnv: string[];
  fromFlags: string[];
  /** A value set in one layer and replaced by a later one, e.g. host from the file replaced by --host. */
  overridden: Array<{ option: string; by: string; over: string }>;
  /** TASKGATE_* variables ignored on purpose (Kubernetes service links), with the shape recognised. */
  ignored: Array<{ variable: string; reason: string }>;
}

export interface MergeRecord {
  provenance: Map<string, Source>;
  overridden: ConfigReport["overridden"];
}

/**
 * Deep-merges `layer` onto `base` (plain objects merge, everything else replaces), records the
 * source of every set path and every value a layer replaces with a different one.
 */
export function mergeLayer(base: Raw, layer: Raw, at: Segment[], record: MergeRecord, sourceOf: (path: Segment[]) => Source): Raw {
  const out: Raw = { ...base };
  for (const [key, value] of Object.entries(layer)) {
    if (value === undefined) continue;
    const path = [...at, key];
    const existing = out[key];
    const before = record.provenance.get(pathKey(path));
    const source = sourceOf(path);
    if (before && !isPlainObject(value) && existing !== undefined && JSON.stringify(existing) !== JSON.stringify(value)) {
      record.overridden.push({ option: pathKey(path), by: describeSource(source), over: describeSource(before) });
    }
    record.provenance.set(pathKey(path), source);
    out[key] =
      isPlainObject(value) && isPlainObject(existing)
        ? mergeLayer(existing, value, path, record, sourceOf)
        : isPlainObject(value)
          ? mergeLayer({}, value, path, record, sourceOf)
          : value;
  }
  return out;
}

export function describeSource(source: Source): string {
  switch (source.kind) {
    case "file":
      return `config file ${source.file}`;
    case "env":
      return source.variable;
    case "flag":
      return source.flag ? `flag ${source.flag}` : "a command-line flag";
  }
}

/** The report: leaf options per layer (objects are containers, not options). */
export function reportOf(
  file: string | undefined,
  provenance: Map<string, Source>,
  overridden: ConfigReport["overridden"],
  ignored: ConfigReport["ignored"],
): ConfigReport {
  const keys = [...provenance.keys()];
  const leaves = keys.filter((key) => !keys.some((other) => other.startsWith(`${key}.`) || other.startsWith(`${key}[`)));
  const report: ConfigReport = { fromFile: [], fromEnv: [], fromFlags: [], overridden, ignored };
  if (file !== undefined) report.file = file;
  for (const key of leaves) {
    const source = provenance.get(key) as Source;
    if (source.kind === "file") report.fromFile.push(key);
    else if (source.kind === "env") report.fromEnv.push(`${key} (${source.variable})`);
    else report.fromFlags.push(source.flag ? `${key} (${source.flag})` : key);
  }
  return report;
}
