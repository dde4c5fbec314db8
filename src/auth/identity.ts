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

/** How a caller appears in logs. In demo mode the subject IS the bearer token, so only a hash is shown. */
export const loggableSubject = (identity: Identity, mode: string) =>
  mode === "demo" ? `demo#${sha256Hex(identity.subject).slice(0, 12)}` : identity.subject;
