// JWT identity (auth.mode "jwt"): the bearer token is an OAuth access token, a JWS verified with jose
// against auth.jwt's keys (jwtKeys.ts): signature with an allowed asymmetric algorithm, `iss` equal to
// auth.jwt.issuer, `aud` naming one of auth.jwt.audience, `exp` present and not passed and `nbf` reached
// (both within auth.jwt.clockToleranceSec). The subject is the string claim auth.jwt.subjectClaim
// (default `sub`); scopes come from `scope` (space-separated) and/or `scp` (array or space-separated).
// Every refusal is invalid_token with a description a person can act on, naming claims and expected
// values but never the token. Keys that cannot be fetched give temporarily_unavailable instead.

import { decodeProtectedHeader, errors, type JWTPayload, jwtVerify, type ProtectedHeaderParameters } from "jose";
import { accepted, type IdentityResolver, invalidToken, type ResolveResult, unavailable } from "./identity.js";
import { createJwtKeySource, type JwtOptions, KeySourceUnavailable } from "./jwtKeys.js";

/** Verified tokens remembered at most (verifiedCacheMs), the oldest forgotten first. */
export const VERIFIED_TOKENS_MAX = 10_000;

/** `clock` (ms since the epoch): the time every check reads, the cache's and jose's (tests move it). */
export function createJwtResolver(jwt: JwtOptions, clock: () => number = Date.now): IdentityResolver {
  const keys = createJwtKeySource(jwt);
  const verifyOptions = {
    issuer: jwt.issuer,
    audience: jwt.audience,
    algorithms: keys.algorithms,
    clockTolerance: jwt.clockToleranceSec,
    // An access token that never expires is refused: a leaked one would work forever.
    requiredClaims: ["exp"],
  };
  const explain = describeFailure(jwt, keys.algorithms);
  const verified = new VerifiedTokens(jwt.verifiedCacheMs, clock);

  const verify = async (token: string): Promise<ResolveResult> => {
    if (typeof token !== "string" || token.trim() === "") return invalidToken("the token is empty");
    const parts = token.split(".").length;
    if (parts === 5) return invalidToken("the token is encrypted (JWE): taskgate accepts signed JWT access tokens only");
    let header: ProtectedHeaderParameters;
    try {
      if (parts !== 3) throw new Error("not three parts");
      header = decodeProtectedHeader(token);
    } catch {
      return invalidToken("the token is not a JWT (expected three base64url parts: header.payload.signature)");
    }
    if (header.alg === "none") return invalidToken("the token is unsigned (alg 'none'): unsigned tokens are never accepted");
    try {
      const { key } = keys;
      const options = { ...verifyOptions, currentDate: new Date(clock()) };
      const { payload } = typeof key === "function" ? await jwtVerify(token, key, options) : await jwtVerify(token, key, options);
      const result = identityFrom(payload, jwt.subjectClaim);
      if (result.ok) verified.remember(token, result, payload.exp);
      return result;
    } catch (error) {
      return explain(error, header);
    }
  };

  return {
    mode: "jwt",
    // A token verified a moment ago is answered at once, without a promise.
    resolve: (token: string) => verified.recall(token) ?? verify(token),
  };
}

/** Tokens verified lately, each until `ms` after its check or its `exp`, whichever comes first. */
class VerifiedTokens {
  private readonly entries = new Map<string, { result: ResolveResult; until: number }>();

  constructor(
    private readonly ms: number,
    private readonly clock: () => number,
  ) {}

  recall(token: string): ResolveResult | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (this.clock() < entry.until) return entry.result;
    this.entries.delete(token);
    return undefined;
  }

  remember(token: string, result: ResolveResult, exp: number | undefined): void {
    if (this.ms === 0 || exp === undefined) return;
    if (this.entries.size >= VERIFIED_TOKENS_MAX) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(token, { result, until: Math.min(this.clock() + this.ms, exp * 1000) });
  }
}

function identityFrom(payload: JWTPayload, subjectClaim: string): ResolveResult {
  const subject = Object.hasOwn(payload, subjectClaim) ? payload[subjectClaim] : undefined;
  if (subject === undefined) return invalidToken(`the token has no '${subjectClaim}' claim (the subject, auth.jwt.subjectClaim)`);
  if (typeof subject !== "string" || subject === "") {
    return invalidToken(`the token's '${subjectClaim}' claim (the subject) must be a non-empty string`);
  }
  const scopes = new Set<string>();
  for (const claim of ["scope", "scp"] as const) {
    const value = payload[claim];
    if (value === undefined) continue;
    if (typeof value === "string") value.split(" ").forEach((scope) => scope && scopes.add(scope));
    else if (claim === "scp" && Array.isArray(value) && value.every((scope) => typeof scope === "string"))
      value.forEach((scope) => scopes.add(scope));
    else
      return invalidToken(
        `the token's '${claim}' claim must be ` +
          (claim === "scope" ? "a space-separated string" : "an array of strings or a space-separated string"),
      );
  }
  return accepted({ subject, scopes: [...scopes], claims: { ...payload } });
}

/** A claim value as shown in a description: quoted, truncated (it is the caller's input). */
function shown(value: unknown): string {
  if (Array.isArray(value)) return `[${value.slice(0, 5).map(shown).join(", ")}${value.length > 5 ? ", ..." : ""}]`;
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  return `'${text.length > 80 ? `${text.slice(0, 77)}...` : text}'`;
}

const isoTime = (seconds: unknown) =>
  typeof seconds === "number" && Number.isFinite(seconds) ? new Date(seconds * 1000).toISOString().replace(/\.000Z$/, "Z") : shown(seconds);

function describeFailure(jwt: JwtOptions, algorithms: readonly string[]) {
  const expectedAudience = Array.isArray(jwt.audience)
    ? jwt.audience.length === 1
      ? shown(jwt.audience[0])
      : `one of ${jwt.audience.map(shown).join(", ")}`
    : shown(jwt.audience);
  const skew = `allowed clock skew ${jwt.clockToleranceSec} s`;

  return (error: unknown, header: ProtectedHeaderParameters): ResolveResult => {
    if (error instanceof KeySourceUnavailable) return unavailable(error.message);
    const kid = typeof header.kid === "string" ? ` '${header.kid.slice(0, 80)}'` : "";
    if (error instanceof errors.JWTExpired) {
      return invalidToken(`the token expired at ${isoTime(error.payload.exp)} (${skew})`);
    }
    if (error instanceof errors.JWTClaimValidationFailed) {
      const { claim, reason, payload } = error;
      if (reason === "missing") {
        return invalidToken(
          claim === "exp" ? "the token has no 'exp' claim: access tokens must expire" : `the token has no '${claim}' claim`,
        );
      }
      switch (claim) {
        case "nbf":
          return invalidToken(`the token is not valid before ${isoTime(payload.nbf)} (${skew})`);
        case "iss":
          return invalidToken(`issuer ${shown(payload.iss)} is not ${shown(jwt.issuer)}`);
        case "aud":
          return invalidToken(`audience ${shown(payload.aud)} is not ${expectedAudience}`);
        default:
          // jose's own messages here are fixed texts naming the claim (e.g. '"exp" claim must be a number').
          return invalidToken(`the token's claims are not valid: ${error.message}`);
      }
    }
    if (error instanceof errors.JOSEAlgNotAllowed) {
      return invalidToken(`algorithm ${shown(header.alg)} is not accepted (allowed: ${algorithms.join(", ")})`);
    }
    if (error instanceof errors.JWSSignatureVerificationFailed) {
      return invalidToken(`the signature does not verify with the issuer's key${kid}`);
    }
    if (error instanceof errors.JWKSNoMatchingKey) {
      return invalidToken(
        kid
          ? `the issuer's JWKS has no key${kid} for algorithm ${shown(header.alg)}, even after fetching it again (unknown or retired key)`
          : `the token names no key (kid) and the issuer's JWKS has no key for algorithm ${shown(header.alg)}`,
      );
    }
    if (error instanceof errors.JWKSMultipleMatchingKeys) {
      return invalidToken("the token names no key (kid) and several keys of the issuer's JWKS could verify it");
    }
    if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) {
      return invalidToken(`the token is malformed: ${error.message}`);
    }
    if (error instanceof errors.JOSEError || error instanceof TypeError) {
      // e.g. an unsupported `crit` header, or an RSA key shorter than 2048 bits: the token cannot be trusted.
      return invalidToken(`the token cannot be verified: ${(error as Error).message}`);
    }
    return unavailable(`unexpected error while verifying a token: ${error instanceof Error ? error.message : String(error)}`);
  };
}
