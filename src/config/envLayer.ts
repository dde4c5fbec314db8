// The environment layer: TASKGATE_* variables read into raw configuration data, each by the
// option it is declared on (catalog.ts). `PORT` (the hosting platforms' convention) sets the port
// when TASKGATE_PORT does not; Kubernetes service-link variables are recognised and ignored;
// any other TASKGATE_* variable is an error with a "did you mean".

import { ENV_ENTRIES, type OptionEntry } from "./catalog.js";
import { closest } from "./didYouMean.js";
import { pathKey, quote, type Raw, setPath } from "./paths.js";
import { serviceLinkShape } from "./serviceLinks.js";
import { readText, type TextProblem } from "./textValues.js";

/** The platform convention: the port to listen on, used when TASKGATE_PORT is not set. */
export const PORT_VARIABLE = "PORT";

const BY_VARIABLE = new Map<string, OptionEntry & { variable: string }>(ENV_ENTRIES.map((entry) => [entry.variable, entry]));

/** Every TASKGATE_* variable taskgate understands; any other TASKGATE_* variable is an error. */
export const ENV_VARS: readonly string[] = ENV_ENTRIES.map((entry) => entry.variable);

export interface EnvLayer {
  data: Raw;
  /** The variable that set each option (by path key). */
  variableOf: Map<string, string>;
}

export interface IgnoredVariable {
  variable: string;
  reason: string;
}

/** One line per problem of a variable's text, naming the variable, its option and what is allowed. */
export function envProblem(variable: string, option: string, problem: TextProblem): string {
  const got = problem.got !== undefined ? `, got ${quote(problem.got)}` : "";
  const reason = problem.reason !== undefined ? `: ${problem.reason}` : "";
  return `${variable}: ${problem.what} (option ${option})${got}${reason}`;
}

export function readEnv(env: NodeJS.ProcessEnv, problems: string[], ignored: IgnoredVariable[]): EnvLayer {
  const data: Raw = {};
  const variableOf = new Map<string, string>();
  for (const [name, rawValue] of Object.entries(env)) {
    if (!name.startsWith("TASKGATE_") || rawValue === undefined) continue;
    const link = serviceLinkShape(name, rawValue);
    if (link) {
      ignored.push({ variable: name, reason: `Kubernetes service link (${link})` });
      continue;
    }
    const entry = BY_VARIABLE.get(name);
    if (!entry) {
      const guess = closest(name, ENV_VARS);
      problems.push(`${name}: unknown environment variable${guess ? ` (did you mean ${guess}?)` : ""}; known: ${ENV_VARS.join(", ")}`);
      continue;
    }
    const read = readText(entry.kind, rawValue.trim());
    if ("problems" in read) problems.push(...read.problems.map((problem) => envProblem(name, entry.option, problem)));
    if (!("value" in read)) continue;
    setPath(data, entry.path, read.value);
    variableOf.set(pathKey(entry.path), name);
  }
  readPort(env, data, variableOf, problems);
  return { data, variableOf };
}

/** PORT only where TASKGATE_PORT set nothing (absent, empty, or a service link). */
function readPort(env: NodeJS.ProcessEnv, data: Raw, variableOf: Map<string, string>, problems: string[]): void {
  const port = env[PORT_VARIABLE]?.trim();
  if (!port || data.port !== undefined) return;
  if (/^\d+$/.test(port) && Number.isSafeInteger(Number(port))) {
    data.port = Number(port);
    variableOf.set("port", PORT_VARIABLE);
  } else {
    problems.push(`${PORT_VARIABLE}: must be an integer (option port, used when TASKGATE_PORT is not set), got ${quote(port)}`);
  }
}
