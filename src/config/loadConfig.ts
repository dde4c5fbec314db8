// loadConfig: builds the one validated Config from layers, later ones winning:
// schema defaults < config file (.yaml/.yml/.json) < TASKGATE_* environment variables < CLI overrides.
// `PORT` (the Node convention of hosting platforms) sets the port when TASKGATE_PORT does not;
// Kubernetes service-link variables (TASKGATE_SERVICE_HOST, TASKGATE_PORT=tcp://…) are ignored.
// Objects are deep-merged; arrays and scalars replace. Every failure throws ConfigError, whose message
// has one line per problem naming the option path, where the value came from, and what is allowed.
// loadConfigWithReport also says where each value came from and which values a later layer replaced.
// The jobs live beside it: fileLayer.ts, envLayer.ts, merge.ts, headerVariables.ts, issues.ts.

import { ENV_ENTRIES } from "./catalog.js";
import type { TextKind } from "./declaration.js";
import { type EnvLayer, readEnv } from "./envLayer.js";
import { type FileLayer, readConfigFile } from "./fileLayer.js";
import { expandHeaderVariables } from "./headerVariables.js";
import { describeIssue, sourceSuffix } from "./issues.js";
import { type ConfigReport, mergeLayer, reportOf, type Source } from "./merge.js";
import { pathKey, type Raw, type Segment } from "./paths.js";
import { type Config, type ConfigInput, ConfigSchema } from "./schema.js";

export { ENV_VARS, PORT_VARIABLE } from "./envLayer.js";
export type { ConfigReport } from "./merge.js";

/** Thrown for every configuration problem; `message` is `problems` joined by newlines. */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: string | readonly string[]) {
    const list = typeof problems === "string" ? [problems] : [...problems];
    super(list.join("\n"));
    this.name = "ConfigError";
    this.problems = list;
  }
}

type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> | undefined } : T;

/** What CLI flags may set: any part of the config input. `undefined` values are ignored. */
export type ConfigOverrides = DeepPartial<ConfigInput>;

export interface ConfigSources {
  /** Path of a .yaml/.yml/.json config file. */
  file?: string;
  /** Environment to read TASKGATE_* variables from (pass process.env). Omitted = no environment layer. */
  env?: NodeJS.ProcessEnv;
  /** Values from CLI flags. */
  overrides?: ConfigOverrides;
  /** Optional flag names per dotted option path, e.g. { port: "--port", "upstream.url": "--upstream" }, for messages. */
  flagNames?: Readonly<Record<string, string>>;
}

/** How a variable's text becomes a value: as is, an integer, true/false, a comma list, `sha256hex:subject,…`, a command line. */
export type EnvValueKind = TextKind;

/** Every TASKGATE_* variable with the option it sets (dotted path) and how its text is read. */
export const ENV_OPTIONS: ReadonlyArray<{ variable: string; option: string; kind: EnvValueKind }> = ENV_ENTRIES.map(
  ({ variable, option, kind }) => ({ variable, option, kind }),
);

export function loadConfig(sources: ConfigSources = {}): Config {
  return loadConfigWithReport(sources).config;
}

/** loadConfig, plus where each value came from (for the start-up log line). Throws ConfigError the same way. */
export function loadConfigWithReport(sources: ConfigSources = {}): { config: Config; report: ConfigReport } {
  const problems: string[] = [];
  const ignored: ConfigReport["ignored"] = [];
  let fileLayer: FileLayer | undefined;
  if (sources.file !== undefined) {
    const result = readConfigFile(sources.file);
    if ("problem" in result) problems.push(result.problem);
    else fileLayer = result;
  }
  const envLayer = sources.env ? readEnv(sources.env, problems, ignored) : undefined;
  if (problems.length > 0) throw new ConfigError(problems);

  const { merged, provenance, overridden } = mergeLayers(sources, fileLayer, envLayer);
  const context = { merged, provenance, fileLayer };
  // Secrets stay out of files: `${NAME}` in an upstream header value is the environment variable NAME.
  expandHeaderVariables(merged, sources.env ?? process.env, problems, (path) => sourceSuffix(path, context));
  if (problems.length > 0) throw new ConfigError(problems);

  // Required blocks without a default: an absent block is reported as its missing options
  // ("upstream.url: is required") rather than as "upstream: expected object".
  // A fleet (backends) has no upstream block.
  for (const block of ["upstream", "auth"])
    if (merged[block] === undefined && !(block === "upstream" && merged.backends)) merged[block] = {};

  const parsed = ConfigSchema.safeParse(merged, { reportInput: true });
  if (parsed.success) return { config: parsed.data, report: reportOf(sources.file, provenance, overridden, ignored) };
  throw new ConfigError(parsed.error.issues.flatMap((issue) => describeIssue(issue, context)));
}

/** The layers merged in order (file, environment, flags), with the source of every value set. */
function mergeLayers(sources: ConfigSources, fileLayer: FileLayer | undefined, envLayer: EnvLayer | undefined) {
  const provenance = new Map<string, Source>();
  const overridden: ConfigReport["overridden"] = [];
  let merged: Raw = {};
  const merge = (layer: Raw, sourceOf: (path: Segment[]) => Source) => {
    merged = mergeLayer(merged, layer, [], { provenance, overridden }, sourceOf);
  };
  const file = sources.file;
  if (fileLayer && file !== undefined) merge(fileLayer.data, () => ({ kind: "file", file }));
  if (envLayer) {
    merge(envLayer.data, (path) => ({ kind: "env", variable: envLayer.variableOf.get(pathKey(path)) ?? "environment" }));
  }
  if (sources.overrides) {
    const flagNames = sources.flagNames ?? {};
    merge(sources.overrides as Raw, (path) => ({ kind: "flag", flag: flagNames[pathKey(path)] }));
  }
  return { merged, provenance, overridden };
}
