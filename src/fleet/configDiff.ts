// What a reload changes: the running configuration against the new one, both already validated.
// Backends are compared by name and by their whole (parsed, defaulted) options, so a backend whose
// options did not change in any way is `unchanged` and its calls and tasks go on untouched. A
// backend whose only change is its `access` or `approvals` is `unchanged` too and listed in
// `policyChanged`: its rules are replaced in place, its calls and tasks go on.
// The options outside `backends` and `federation` (the listening address, identities, the store,
// quotas…) belong to the running process: a reload that changes one is refused, naming them
// (`needsRestart`), rather than applied halfway. A single upstream reloads its `access` and
// `approvals` alone (policyDiff): any other change needs a restart.

import { isDeepStrictEqual } from "node:util";

export interface BackendsDiff {
  added: string[];
  removed: string[];
  changed: string[];
  unchanged: string[];
  /** Unchanged backends whose access rules or approvals changed (applied in place). */
  policyChanged: string[];
  /** The federation block differs (its path, separator or members). */
  federationChanged: boolean;
  /** Top-level options other than backends and federation that differ: a reload cannot apply them. */
  needsRestart: string[];
}

/** Options a fleet's reload applies; everything else needs a restart. */
const RELOADABLE = new Set(["backends", "federation"]);
/** Options a single upstream's reload applies. */
const POLICY = new Set(["access", "approvals"]);

export interface FleetShape {
  backends?: Record<string, unknown> | undefined;
  federation?: unknown;
  [option: string]: unknown;
}

export function diffBackends(running: FleetShape, next: FleetShape): BackendsDiff {
  const before = running.backends ?? {};
  const after = next.backends ?? {};
  const diff: BackendsDiff = {
    added: [],
    removed: [],
    changed: [],
    unchanged: [],
    policyChanged: [],
    federationChanged: false,
    needsRestart: [],
  };
  for (const [name, options] of Object.entries(after)) {
    if (!Object.hasOwn(before, name)) diff.added.push(name);
    else if (isDeepStrictEqual(withoutPolicy(before[name]), withoutPolicy(options))) {
      diff.unchanged.push(name);
      if (!isDeepStrictEqual(before[name], options)) diff.policyChanged.push(name);
    } else diff.changed.push(name);
  }
  for (const name of Object.keys(before)) if (!Object.hasOwn(after, name)) diff.removed.push(name);
  diff.federationChanged = !isDeepStrictEqual(running.federation, next.federation);
  diff.needsRestart = restartKeys(running, next, RELOADABLE);
  return diff;
}

/** A backend's options without its access rules and approvals (those apply in place). */
function withoutPolicy(options: unknown): unknown {
  if (typeof options !== "object" || options === null) return options;
  const { access: _access, approvals: _approvals, ...rest } = options as Record<string, unknown>;
  return rest;
}

/** Whether the diff changes anything at all. */
export const changesAnything = (diff: BackendsDiff): boolean =>
  diff.added.length + diff.removed.length + diff.changed.length + diff.policyChanged.length > 0 ||
  diff.federationChanged ||
  diff.needsRestart.length > 0;

/** The single upstream's reload: only its access rules and approvals apply in place. */
export function policyDiff(running: FleetShape, next: FleetShape): BackendsDiff {
  const diff: BackendsDiff = {
    added: [],
    removed: [],
    changed: [],
    unchanged: ["upstream"],
    policyChanged: [],
    federationChanged: false,
    needsRestart: [],
  };
  if (!isDeepStrictEqual(running.access, next.access) || !isDeepStrictEqual(running.approvals, next.approvals)) {
    diff.policyChanged.push("upstream");
  }
  diff.needsRestart = restartKeys(running, next, POLICY);
  return diff;
}

/** Why a reload that changes `keys` is refused (`scope`: what this reload could apply). */
export function restartRefusal(keys: readonly string[], scope?: string): string {
  return `these options need a restart, not a reload: ${keys.join(", ")} (${scope ? `${scope}; ` : ""}the running configuration stays)`;
}

/** The top-level options that differ, other than the `reloadable` ones, sorted. */
function restartKeys(running: FleetShape, next: FleetShape, reloadable: ReadonlySet<string>): string[] {
  const keys = new Set([...Object.keys(running), ...Object.keys(next)]);
  return [...keys].filter((key) => !reloadable.has(key) && !isDeepStrictEqual(running[key], next[key])).sort();
}
