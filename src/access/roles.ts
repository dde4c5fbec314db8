// A role: who a rule is about, or who may approve a call. Contract: every selector the role gives
// (subjects, scopes, each claim) must match the identity, and a selector matches when one of its
// patterns matches one of the identity's values (a claim holding a list: any of its values; a
// number or boolean claim: its text). A role with no selector is everyone. Identities without
// scopes or claims (demo mode, token entries without scopes) match no scope or claim selector.

import type { Identity } from "../auth/identity.js";
import type { Role } from "../config/accessOptions.js";
import { type Matcher, matcherOf } from "./patterns.js";

export type { Role };

export interface CompiledRole {
  matches(identity: Identity): boolean;
  /** For people: "subjects alice, bob; scopes deployers". */
  readonly described: string;
}

function claimValues(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (typeof value === "number" || typeof value === "boolean") return [String(value)];
  return Array.isArray(value) ? value.flatMap((item) => (typeof item === "string" ? [item] : [])) : [];
}

export function compileRole(role: Role): CompiledRole {
  const checks: Array<(identity: Identity) => boolean> = [];
  const parts: string[] = [];
  if (role.subjects) {
    const match = matcherOf(role.subjects);
    checks.push((identity) => match(identity.subject));
    parts.push(`subjects ${role.subjects.join(", ")}`);
  }
  if (role.scopes) {
    const match = matcherOf(role.scopes);
    checks.push((identity) => (identity.scopes ?? []).some(match));
    parts.push(`scopes ${role.scopes.join(", ")}`);
  }
  for (const [claim, patterns] of Object.entries(role.claims ?? {})) {
    const match: Matcher = matcherOf(patterns);
    checks.push((identity) => claimValues(identity.claims?.[claim]).some(match));
    parts.push(`claim ${claim} ${patterns.join(", ")}`);
  }
  return {
    matches: (identity) => checks.every((check) => check(identity)),
    described: parts.length > 0 ? parts.join("; ") : "anyone",
  };
}
