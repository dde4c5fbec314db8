// Demo identity (auth.mode "demo", development only): the bearer token IS the subject name, unchecked.
// Refused (undefined): empty or whitespace-only tokens, tokens with leading/trailing whitespace,
// tokens longer than 256 characters, and tokens containing control characters or line separators.

import type { Identity, IdentityResolver } from "./identity.js";

export const DEMO_TOKEN_MAX_LENGTH = 256;

const FORBIDDEN = /[\p{Cc}\p{Zl}\p{Zp}]/u;

export function isAcceptableDemoToken(token: string): boolean {
  return (
    typeof token === "string" &&
    token.trim() !== "" &&
    token === token.trim() &&
    token.length <= DEMO_TOKEN_MAX_LENGTH &&
    !FORBIDDEN.test(token)
  );
}

export function createDemoResolver(): IdentityResolver {
  return {
    mode: "demo",
    async resolve(token: string): Promise<Identity | undefined> {
      return isAcceptableDemoToken(token) ? { subject: token } : undefined;
    },
  };
}
