// requiredScopes: does an identity carry every scope a door requires? An identity without scopes
// (demo mode, a configured token without `scopes`) carries none, so any required scope refuses it:
// configuring requiredScopes fails closed. The refusal is RFC 6750 `insufficient_scope` (HTTP 403)
// with the full required list, which the challenge repeats in its `scope` attribute.

import type { Identity } from "./identity.js";

export type ScopeCheck = { ok: true } | { ok: false; error: "insufficient_scope"; description: string; scope: string[]; missing: string[] };

export function checkRequiredScopes(identity: Identity, required: readonly string[]): ScopeCheck {
  if (required.length === 0) return { ok: true };
  const granted = new Set(identity.scopes ?? []);
  const missing = required.filter((scope) => !granted.has(scope));
  if (missing.length === 0) return { ok: true };
  return {
    ok: false,
    error: "insufficient_scope",
    description:
      `the token lacks the scope${missing.length > 1 ? "s" : ""} ${missing.map((s) => `'${s}'`).join(", ")} ` +
      `(required: ${required.join(" ")})`,
    scope: [...required],
    missing,
  };
}
