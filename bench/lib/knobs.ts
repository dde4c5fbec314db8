// Reads the bench's environment knobs. Every knob has a default; a malformed value stops the run
// at once with a message naming the variable and what it must be (never a silent fallback).

export function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got '${raw}'`);
  return value;
}

/** A comma-separated list of positive integers, e.g. BENCH_SCALE=1000,5000,10000 (sorted, unique). */
export function positiveIntList(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const values = raw.split(",").map((part) => Number(part.trim()));
  if (values.length === 0 || values.some((v) => !Number.isInteger(v) || v <= 0)) {
    throw new Error(`${name} must be a comma-separated list of positive integers, got '${raw}'`);
  }
  return [...new Set(values)].sort((a, b) => a - b);
}

export function oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new Error(`${name} must be one of ${allowed.join(", ")}, got '${raw}'`);
  return raw as T;
}

export type StoreKind = "memory" | "file" | "redis";
export const storeKind = (): StoreKind => oneOf("BENCH_STORE", ["memory", "file", "redis"] as const, "memory");
export const redisUrl = () => process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
/** Log level of the taskgate under test (silent, as in the e2e tests; "info" shows what logging costs). */
export const gatewayLogLevel = () => oneOf("BENCH_GATEWAY_LOG", ["silent", "error", "warn", "info", "debug"] as const, "silent");
/** Node flags listed in environment variable `name`, separated by white space. */
const nodeFlagsIn = (name: string) => (process.env[name] ?? "").split(/\s+/).filter((flag) => flag !== "");
/** Extra Node flags for the taskgate process (profiling: "--cpu-prof --cpu-prof-dir=DIR", "--trace-gc"). */
export const gatewayNodeFlags = () => nodeFlagsIn("BENCH_GATEWAY_NODE_FLAGS");
/** The same for the floors of `inline` (proxy, its twin, the translating floor, the stdio bridges): a V8 setting tried
 *  on taskgate is tried on its floors too, since a floor must be the cheapest way to do the work. */
export const floorNodeFlags = () => nodeFlagsIn("BENCH_FLOOR_NODE_FLAGS");

/** BENCH_PHASES=1: the processes in the middle of `inline` time each call's phases (lib/phases.ts). */
export const phasesOn = () => process.env.BENCH_PHASES === "1";
