// Which calls need approval, and whose: the `approvals` list of one upstream, compiled. Contract:
// the first entry whose tool patterns match the tool and whose argument patterns all match the
// call's arguments decides (an argument that is absent does not match; a value that is not a
// string is matched as its JSON text). The rule is named by its position (`approvals[2]`), which
// every approval and audit line carries.

import type { ApprovalRuleOptions } from "../config/accessOptions.js";
import { isObject } from "../util/json.js";
import { type Matcher, matcherOf } from "./patterns.js";
import { type CompiledRole, compileRole, type Role } from "./roles.js";

export interface ApprovalNeed {
  /** "approvals[0]": which entry asked for it. */
  rule: string;
  /** The caller confirms, or someone in this role decides. */
  approver: "caller" | CompiledRole;
  /** The approver role as configured (stored with a pending approval, checked again by whoever decides). */
  role?: Role;
  expiresAfterMs: number;
}

interface CompiledApproval {
  tools: Matcher;
  arguments: Array<[string, Matcher]>;
  need: ApprovalNeed;
}

const textOf = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value));

export class ApprovalRules {
  private readonly entries: CompiledApproval[];

  constructor(approvals: readonly ApprovalRuleOptions[], prefix = "approvals") {
    this.entries = approvals.map((entry, index) => ({
      tools: matcherOf(entry.tools),
      arguments: Object.entries(entry.arguments ?? {}).map(([name, pattern]) => [name, matcherOf([pattern])] as [string, Matcher]),
      need: {
        rule: `${prefix}[${index}]`,
        approver: entry.approver === "caller" ? "caller" : compileRole(entry.approver),
        ...(entry.approver !== "caller" ? { role: entry.approver } : {}),
        expiresAfterMs: entry.expiresAfterMs,
      },
    }));
  }

  /** The approval a call of `tool` with `args` needs, if any. */
  needFor(tool: string, args: unknown): ApprovalNeed | undefined {
    const given = isObject(args) ? args : {};
    for (const entry of this.entries) {
      if (!entry.tools(tool)) continue;
      if (entry.arguments.every(([name, match]) => Object.hasOwn(given, name) && match(textOf(given[name])))) return entry.need;
    }
    return undefined;
  }

  /** Whether a tool may need a role's approval (such calls run only as tasks: the caller cannot wait inline for days). */
  mayNeedRole(tool: string): boolean {
    return this.entries.some((entry) => entry.need.approver !== "caller" && entry.tools(tool));
  }
}
