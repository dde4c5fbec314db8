// The access parts of one upstream (the single one, or a backend of a fleet): its rules, its
// approvals and the audit trail, as the method handlers and the call owner use them. Replaced in
// place by a reload (update()), so the backend's calls and tasks go on. Contract:
// - allows() / visible(): what an identity may see and call; lists are filtered with visible().
// - guardFor(): what a tools/call must pass before it is sent upstream (callGuard.ts), and its
//   audit line when it ends.
// A call already past its gate is not stopped by a later reload (docs/decisions/0024).

import type { Identity } from "../auth/identity.js";
import type { UpstreamPolicy } from "../config/accessOptions.js";
import type { JsonObject } from "../protocol/wire.js";
import { argumentsDigest } from "../util/json.js";
import { AccessRules, type EntryKind, type AccessRules as Rules } from "./accessRules.js";
import { ApprovalRules } from "./approvalRules.js";
import type { Approvals } from "./approvals.js";
import type { AuditTrail } from "./auditTrail.js";
import { type CallGuard, type GuardedCall, guardCall } from "./callGuard.js";

export interface UpstreamAccessDeps {
  approvals: Approvals;
  audit: AuditTrail;
  /** How a caller is named in audit lines and to approvers (demo mode: a hash). */
  shown: (identity: Identity) => string;
  backend?: string | undefined;
  /** Audit lines for every call, even without rules (audit.file set). */
  auditAllCalls: boolean;
}

export class UpstreamAccess {
  private rules: Rules;
  private approvalRules: ApprovalRules;
  private restricted: boolean;

  constructor(
    policy: UpstreamPolicy,
    private readonly deps: UpstreamAccessDeps,
  ) {
    this.rules = new AccessRules(policy.access);
    this.approvalRules = new ApprovalRules(policy.approvals, deps.backend ? `backends.${deps.backend}.approvals` : "approvals");
    this.restricted = !this.rules.open || policy.approvals.length > 0;
  }

  /** A reload: new rules and approvals for calls from now on. */
  update(policy: UpstreamPolicy): void {
    this.rules = new AccessRules(policy.access);
    this.approvalRules = new ApprovalRules(policy.approvals, this.deps.backend ? `backends.${this.deps.backend}.approvals` : "approvals");
    this.restricted = !this.rules.open || policy.approvals.length > 0;
  }

  /** Whether any rule or approval applies here (the legacy door, a pass-through, is then closed). */
  get policed(): boolean {
    return this.restricted;
  }

  allows(identity: Identity, kind: EntryKind, name: string): boolean {
    return this.rules.allows(identity, kind, name);
  }

  /** `items` without the entries `identity` may not see (`field` names each entry). */
  visible(identity: Identity, kind: EntryKind, items: unknown, field: string): unknown {
    if (this.rules.open || !Array.isArray(items)) return items;
    return items.filter(
      (item: JsonObject) => typeof item?.[field] !== "string" || this.rules.allows(identity, kind, item[field] as string),
    );
  }

  /** A call of a hidden tool: the audit line (the caller is answered as for an unknown tool). */
  hiddenCall(identity: Identity, tool: string, args: unknown): void {
    const { audit, shown, backend } = this.deps;
    audit.write({
      action: "access.hidden_call",
      caller: shown(identity),
      backend,
      tool,
      argumentsDigest: argumentsDigest(args),
      arguments: args,
      outcome: "unknown_tool",
    });
  }

  /** What this call must pass before it goes upstream; undefined when nothing is asked and nothing audited. */
  guardFor(call: GuardedCall): CallGuard | undefined {
    const need = this.approvalRules.needFor(call.tool, call.args);
    if (!need && !this.restricted && !this.deps.auditAllCalls) return undefined;
    const { approvals, audit, shown, backend } = this.deps;
    return guardCall(call, need, { approvals, audit, caller: shown(call.identity), backend });
  }
}
