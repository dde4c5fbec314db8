// Token identity (auth.mode "tokens"): the presented bearer token is hashed with sha256 and looked up
// among the configured { sha256, subject } entries; only hashes are held, never tokens. Every entry is
// compared with crypto.timingSafeEqual on the 32-byte digests, without stopping early at a match.

import { createHash, timingSafeEqual } from "node:crypto";
import type { Config } from "../config/schema.js";
import type { Identity, IdentityResolver } from "./identity.js";

interface Entry {
  digest: Buffer;
  subject: string;
}

export function createTokenResolver(tokens: Config["auth"]["tokens"]): IdentityResolver {
  if (tokens.length === 0) throw new Error("auth.tokens: mode 'tokens' needs at least one token");
  const entries: Entry[] = tokens.map(({ sha256, subject }, index) => {
    const digest = Buffer.from(sha256, "hex");
    if (digest.length !== 32 || digest.toString("hex") !== sha256.toLowerCase()) {
      throw new Error(`auth.tokens[${index}].sha256: must be 64 hex characters (sha256 of the token)`);
    }
    return { digest, subject };
  });

  return {
    mode: "tokens",
    async resolve(token: string): Promise<Identity | undefined> {
      if (typeof token !== "string" || token.trim() === "") return undefined;
      const presented = createHash("sha256").update(token, "utf8").digest();
      let subject: string | undefined;
      for (const entry of entries) {
        // No early exit: the time taken does not depend on which entry (if any) matches.
        if (timingSafeEqual(presented, entry.digest) && subject === undefined) subject = entry.subject;
      }
      return subject === undefined ? undefined : { subject };
    },
  };
}
