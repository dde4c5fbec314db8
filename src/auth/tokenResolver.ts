// Token identity (auth.mode "tokens"): the presented bearer token is hashed with sha256 and looked up
// among the configured { sha256, subject, scopes? } entries; only hashes are held, never tokens. Every
// entry is compared with crypto.timingSafeEqual on the 32-byte digests, without stopping early at a
// match. An unknown token is invalid_token; the entry's scopes (if configured) become the identity's.

import { createHash, timingSafeEqual } from "node:crypto";
import type { Config } from "../config/schema.js";
import { accepted, type Identity, type IdentityResolver, invalidToken, type ResolveResult } from "./identity.js";

interface Entry {
  digest: Buffer;
  identity: Identity;
}

export function createTokenResolver(tokens: Config["auth"]["tokens"]): IdentityResolver {
  if (tokens.length === 0) throw new Error("auth.tokens: mode 'tokens' needs at least one token");
  const entries: Entry[] = tokens.map(({ sha256, subject, scopes }, index) => {
    const digest = Buffer.from(sha256, "hex");
    if (digest.length !== 32 || digest.toString("hex") !== sha256.toLowerCase()) {
      throw new Error(`auth.tokens[${index}].sha256: must be 64 hex characters (sha256 of the token)`);
    }
    return { digest, identity: scopes === undefined ? { subject } : { subject, scopes: [...scopes] } };
  });

  return {
    mode: "tokens",
    resolve(token: string): ResolveResult {
      if (typeof token !== "string" || token.trim() === "") return invalidToken("the token is empty");
      const presented = createHash("sha256").update(token, "utf8").digest();
      let found: Identity | undefined;
      for (const entry of entries) {
        // No early exit: the time taken does not depend on which entry (if any) matches.
        if (timingSafeEqual(presented, entry.digest) && found === undefined) found = entry.identity;
      }
      if (found === undefined) return invalidToken("the token is not one of the tokens this gateway accepts (auth.tokens)");
      return accepted(found.scopes === undefined ? { subject: found.subject } : { subject: found.subject, scopes: [...found.scopes] });
    },
  };
}
