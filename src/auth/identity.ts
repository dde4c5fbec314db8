// Identity: who is calling. A resolver turns a bearer token into a subject, or refuses it.

import { createHash } from "node:crypto";

export interface Identity {
  subject: string;
}

export interface IdentityResolver {
  readonly mode: string;
  /** undefined = the token is not valid. Never throws for a bad token. */
  resolve(token: string): Promise<Identity | undefined>;
}

export const sha256Hex = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** What a task stores about its owner: a hash, so the store never holds subjects in clear. */
export const ownerHashOf = (identity: Identity) => sha256Hex(`subject:${identity.subject}`);
