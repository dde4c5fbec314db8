// Who may see and call what, and which calls need someone's approval first: the `access` and
// `approvals` blocks of one upstream (top level for the single upstream; inside each backend of a
// fleet, the same shape). Declared once here and reused by BackendSchema. A role (the subjects of
// a rule, an approver) names identities by subject, scope or JWT claim, each a list of glob
// patterns; the meaning of the patterns is src/access/'s (picomatch). Plus the `audit` block: where
// the one line per decision and per call goes besides the log.

import { z } from "zod";
import { option, section } from "./declaration.js";
import { timerMs } from "./values.js";

const patterns = z.array(z.string().min(1, "a pattern must not be empty")).min(1, "must list at least one pattern");

/** Who a rule or an approver is: every selector given must match (one pattern of each list suffices). */
export const RoleSchema = z
  .object({
    subjects: patterns.optional(),
    scopes: patterns.optional(),
    /** A JWT claim (e.g. `groups`) → patterns; a claim holding a list matches when one of its values does. */
    claims: z.record(z.string().min(1), patterns).optional(),
  })
  .strict();

export type Role = z.infer<typeof RoleSchema>;

const NamesSchema = z
  .object({
    tools: patterns.optional(),
    prompts: patterns.optional(),
    /** Resource URIs (and URI templates). */
    resources: patterns.optional(),
  })
  .strict();

const AccessRuleSchema = RoleSchema.extend({ allow: NamesSchema.optional(), deny: NamesSchema.optional() })
  .strict()
  .refine((rule) => rule.allow !== undefined || rule.deny !== undefined, { message: "a rule needs allow or deny (or both)" });

const AccessFields = z
  .object({
    default: option(z.enum(["allow", "deny"]).default("allow"), {
      env: false,
      help: "what an identity may do with a tool, prompt or resource no rule names for it",
    }),
    rules: option(z.array(AccessRuleSchema).default([]), {
      env: false,
      help: "per role (subjects, scopes, claims), glob patterns of tools, prompts and resources allowed or denied; deny wins",
      details:
        "A rule without subjects, scopes or claims applies to everyone. A hidden tool is absent from tools/list and the " +
        "federated catalog, and calling it answers exactly as an unknown tool does. See docs/access-and-approvals.md.",
      defaultText: "none",
    }),
  })
  .strict();

export const AccessSchema = section(AccessFields.prefault({}), {
  help: "Which identities may see and call which tools, prompts and resources (docs/access-and-approvals.md).",
});

export const ApprovalRuleSchema = z
  .object({
    tools: patterns,
    /** Argument name → glob its value (text, or JSON text when not a string) must match. */
    arguments: z.record(z.string().min(1), z.string()).optional(),
    approver: z.union([z.literal("caller"), RoleSchema]),
    expiresAfterMs: timerMs.positive().default(3_600_000),
  })
  .strict();

export type ApprovalRuleOptions = z.infer<typeof ApprovalRuleSchema>;

export const ApprovalsOption = option(z.array(ApprovalRuleSchema).default([]), {
  env: false,
  help: "calls (tool glob patterns, optionally argument patterns) that need approval before they reach the upstream",
  details:
    "`approver: caller`: the caller confirms (input_required, before anything is sent upstream); a role " +
    "(`{subjects, scopes, claims}`): someone else decides through `GET /approvals` and `POST /approvals/<id>` while " +
    "the caller's task waits. The first matching entry decides; an undecided approval fails the task after expiresAfterMs.",
  defaultText: "none",
});

export const AuditSchema = section(
  z
    .object({
      file: option(z.string().min(1).optional(), {
        help: "also append the audit lines (one JSON line per access decision, approval and call) to this file",
        defaultText: "the log only",
      }),
      arguments: option(z.boolean().default(false), {
        help: "put the arguments' values in audit lines (otherwise only their sha256 digest)",
      }),
    })
    .strict()
    .prefault({}),
  { help: "The audit trail: who called what, what was decided, by whom." },
);

/** The policy of one upstream as the access parts read it. */
export interface UpstreamPolicy {
  access: z.infer<typeof AccessFields>;
  approvals: ApprovalRuleOptions[];
}
