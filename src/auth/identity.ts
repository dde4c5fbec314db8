// Identity: who is calling. A resolver turns a bearer token into an identity, or says why it
// cannot: the token is not acceptable (RFC 6750 `invalid_token`, the client's problem) or the
// resolver cannot verify anything right now (`temporarily_unavailable`, taskgate's problem, e.g.
// the identity provider's keys cannot be fetched). Descriptions are for the person holding the
// token ("token expired at …") and never contain the token itself.

import { createHash } from "node:crypto";

export interface Identity {
  subject: string;
  /** Scopes granted to the token, when the mode knows them (JWT `scope`/`scp`, configured tokens). */
  scopes?: string[];
  /** The verified token's claims (auth.mode jwt only): access rules, approvers and the operator role may name one (e.g. `groups`). */
  claims?: Readonly<Record<string, unknown>>;
}

export type ResolveResult =
  | { ok: true; identity: Identity }
  | { ok: false; error: "invalid_token"; description: string }
  | { ok: false; error: "temporarily_unavailable"; description: string };

export interface IdentityResolver {
  readonly mode: string;
  /** Never throws for a bad token: every refusal is an `ok: false` result with a description. A resolver that needs
   *  nothing to wait for (demo, tokens) answers at once, without a promise: every request is authenticated. */
  resolve(token: string): ResolveResult | Promise<ResolveResult>;
}

export const accepted = (identity: Identity): ResolveResult => ({ ok: true, identity });
export const invalidToken = (description: string): ResolveResult => ({ ok: false, error: "invalid_token", description });
export const unavailable = (description: string): ResolveResult => ({ ok: false, error: "temporarily_unavailable", description });

export const sha256Hex = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** Subject → hash, remembered for the busiest callers so a hot path hashes once, not per request. */
const MEMO_LIMIT = 10_000;
const ownerHashes = new Map<string, string>();
const demoNames = new Map<string, string>();

function remembered(memo: Map<string, string>, key: string, compute: () => string): string {
  let value = memo.get(key);
  if (value === undefined) {
    value = compute();
    if (memo.size >= MEMO_LIMIT) memo.delete(memo.keys().next().value as string); // the oldest entry
    memo.set(key, value);
  }
  return value;
}

/** What a task stores about its owner: a hash, so the store never holds subjects in clear. */
export const ownerHashOf = (identity: Identity) =>
  remembered(ownerHashes, identity.subject, () => sha256Hex(`subject:${identity.subject}`));

/** How a caller appears in logs. In demo mode the subject IS the bearer token, so only a hash is shown. */
export const loggableSubject = (identity: Identity, mode: string) =>
  mode === "demo" ? remembered(demoNames, identity.subject, () => `demo#${sha256Hex(identity.subject).slice(0, 12)}`) : identity.subject;
