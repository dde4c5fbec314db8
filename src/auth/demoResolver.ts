// Demo identity (auth.mode "demo", development only): the bearer token IS the subject name, unchecked.
// Refused (invalid_token): empty or whitespace-only tokens, tokens with leading/trailing whitespace,
// tokens longer than 256 characters, and tokens containing control characters or line separators.
// Demo identities carry no scopes.

import { accepted, type IdentityResolver, invalidToken, type ResolveResult } from "./identity.js";

export const DEMO_TOKEN_MAX_LENGTH = 256;

const FORBIDDEN = /[\p{Cc}\p{Zl}\p{Zp}]/u;

/** Why a demo token is refused, or undefined when it is acceptable. */
export function demoTokenProblem(token: string): string | undefined {
  if (typeof token !== "string" || token.trim() === "") return "the token is empty (demo mode: send your user name as the token)";
  if (token !== token.trim()) return "the token has leading or trailing whitespace (demo mode: the token is your user name, exactly)";
  if (token.length > DEMO_TOKEN_MAX_LENGTH)
    return `the token is longer than ${DEMO_TOKEN_MAX_LENGTH} characters (demo mode: the token is your user name)`;
  if (FORBIDDEN.test(token)) return "the token contains control characters or line separators (demo mode: the token is your user name)";
  return undefined;
}

export function createDemoResolver(): IdentityResolver {
  return {
    mode: "demo",
    resolve(token: string): ResolveResult {
      const problem = demoTokenProblem(token);
      return problem === undefined ? accepted({ subject: token }) : invalidToken(problem);
    },
  };
}
