// Access rules of one upstream: may this identity see and use this tool, prompt or resource?
// Contract: among the rules whose role matches the identity, a deny pattern naming the entry wins
// over any allow; else an allow pattern naming it allows; else `default` decides. Pure and
// compiled once per configuration (patterns.ts); a reload compiles a new one (UpstreamAccess).

import type { Identity } from "../auth/identity.js";
import type { UpstreamPolicy } from "../config/accessOptions.js";
import { type Matcher, matcherOf } from "./patterns.js";
import { type CompiledRole, compileRole } from "./roles.js";

export type EntryKind = "tools" | "prompts" | "resources";
const KINDS: readonly EntryKind[] = ["tools", "prompts", "resources"];

interface CompiledRule {
  role: CompiledRole;
  allow: Record<EntryKind, Matcher>;
  deny: Record<EntryKind, Matcher>;
}

export type AccessVerdict = "allowed" | "denied" | "default-allow" | "default-deny";

export class AccessRules {
  private readonly rules: CompiledRule[];
  private readonly allowsByDefault: boolean;

  constructor(access: UpstreamPolicy["access"]) {
    this.allowsByDefault = access.default === "allow";
    this.rules = access.rules.map((rule) => ({
      role: compileRole(rule),
      allow: Object.fromEntries(KINDS.map((kind) => [kind, matcherOf(rule.allow?.[kind])])) as Record<EntryKind, Matcher>,
      deny: Object.fromEntries(KINDS.map((kind) => [kind, matcherOf(rule.deny?.[kind])])) as Record<EntryKind, Matcher>,
    }));
  }

  /** Whether nothing is ever hidden from anyone (no rules, default allow): the hot path skips every check. */
  get open(): boolean {
    return this.allowsByDefault && this.rules.length === 0;
  }

  verdict(identity: Identity, kind: EntryKind, name: string): AccessVerdict {
    let allowed = false;
    for (const rule of this.rules) {
      if (!rule.role.matches(identity)) continue;
      if (rule.deny[kind](name)) return "denied";
      if (rule.allow[kind](name)) allowed = true;
    }
    if (allowed) return "allowed";
    return this.allowsByDefault ? "default-allow" : "default-deny";
  }

  allows(identity: Identity, kind: EntryKind, name: string): boolean {
    if (this.open) return true;
    const verdict = this.verdict(identity, kind, name);
    return verdict === "allowed" || verdict === "default-allow";
  }
}
