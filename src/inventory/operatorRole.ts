// Who is an operator (inventory.operators): a listed subject, a token carrying a listed scope, or a
// verified JWT whose claim holds a listed value (a claim that is an array: one of its items).
// Nobody is an operator unless configured.

import type { Identity } from "../auth/identity.js";
import type { InventoryOptions } from "../config/inventoryOptions.js";

type Operators = InventoryOptions["operators"];

export function isOperator(identity: Identity, operators: Operators): boolean {
  if (operators.subjects.includes(identity.subject)) return true;
  if ((identity.scopes ?? []).some((scope) => operators.scopes.includes(scope))) return true;
  const claims = identity.claims ?? {};
  return Object.entries(operators.claims).some(([name, values]) => {
    if (!Object.hasOwn(claims, name)) return false;
    const held = claims[name];
    const candidates = Array.isArray(held) ? held : [held];
    return candidates.some((value) => values.includes(value as string | number | boolean));
  });
}
