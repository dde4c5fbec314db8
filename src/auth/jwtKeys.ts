// jwtKeys: where the JWT resolver gets its verification keys, and which algorithms they can verify.
// - auth.jwt.jwksUrl: jose's remote JWKS — cached (jose's 10-minute max age), fetched again when a
//   token names an unknown `kid` (at most once per auth.jwt.jwksCooldownMs), each fetch limited to
//   auth.jwt.jwksTimeoutMs, redirects not followed. A JWKS that cannot be had (refused, timeout, not
//   HTTP 200, not JSON, not a JWK Set) is a KeySourceUnavailable error whose message names the URL and
//   the cause, so the resolver reports "temporarily unavailable" rather than blaming the token. An
//   unknown or ambiguous `kid` stays jose's JWKSNoMatchingKey / JWKSMultipleMatchingKeys: the token's fault.
// - auth.jwt.publicKey: one fixed public key, PEM ("BEGIN PUBLIC KEY") or a JWK JSON string. Private
//   and symmetric keys are refused; the allowed algorithms are narrowed to those the key can verify
//   (and to the JWK's `alg` when it has one); an empty result is a start-up error naming the options.

import { createPublicKey, type KeyObject } from "node:crypto";
import { createRemoteJWKSet, customFetch, errors, type JWTVerifyGetKey } from "jose";
import type { Config } from "../config/schema.js";

export type JwtOptions = NonNullable<Config["auth"]["jwt"]>;

/** The key source could not produce keys for reasons that are not the token's fault. */
export class KeySourceUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "KeySourceUnavailable";
  }
}

export interface JwtKeySource {
  key: KeyObject | JWTVerifyGetKey;
  /** The algorithms tokens may use: the configured ones, narrowed to what a fixed key can verify. */
  algorithms: string[];
}

export function createJwtKeySource(jwt: JwtOptions): JwtKeySource {
  if (jwt.jwksUrl !== undefined) return { key: remoteKeys(jwt.jwksUrl, jwt), algorithms: [...jwt.algorithms] };
  if (jwt.publicKey !== undefined) return fixedKey(jwt.publicKey, jwt.algorithms);
  throw new Error("auth.jwt: set exactly one of auth.jwt.jwksUrl and auth.jwt.publicKey");
}

function remoteKeys(jwksUrl: string, jwt: JwtOptions): JWTVerifyGetKey {
  const url = new URL(jwksUrl);
  const where = `the JWKS at ${url.href}`;
  // Our fetch: jose only says "Expected 200 OK"; the status (and that redirects are not followed) is what
  // an operator needs to fix it.
  const fetchJwks = async (input: string | URL | Request, init?: RequestInit) => {
    const response = await fetch(input, init);
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      const redirect = response.status >= 300 && response.status < 400 ? " (redirects are not followed: configure the final URL)" : "";
      throw new KeySourceUnavailable(`${where} answered HTTP ${response.status} instead of 200${redirect}`);
    }
    return response;
  };
  const jwks = createRemoteJWKSet(url, {
    timeoutDuration: jwt.jwksTimeoutMs,
    cooldownDuration: jwt.jwksCooldownMs,
    [customFetch]: fetchJwks,
  });

  return async (header, token) => {
    try {
      return await jwks(header, token);
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) throw error;
      if (error instanceof KeySourceUnavailable) throw error;
      throw new KeySourceUnavailable(describeFetchFailure(where, error, jwt.jwksTimeoutMs), { cause: error });
    }
  };
}

function describeFetchFailure(where: string, error: unknown, timeoutMs: number): string {
  if (error instanceof errors.JWKSTimeout) return `${where} did not answer within ${timeoutMs} ms (auth.jwt.jwksTimeoutMs)`;
  if (error instanceof errors.JWKSInvalid) return `${where} is not a JWK Set (expected {"keys": [...]})`;
  if (error instanceof errors.JOSEError && /parse .*JSON/.test(error.message)) return `${where} is not JSON`;
  const cause = (error as { cause?: unknown })?.cause;
  const detail = cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error);
  return `${where} cannot be fetched: ${detail}`;
}

/** Algorithms a public key can verify, by its type (and curve). */
function algorithmsFor(key: KeyObject): string[] {
  switch (key.asymmetricKeyType) {
    case "rsa":
      return ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512"];
    case "rsa-pss":
      return ["PS256", "PS384", "PS512"];
    case "ec": {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      return curve === "prime256v1" ? ["ES256"] : curve === "secp384r1" ? ["ES384"] : curve === "secp521r1" ? ["ES512"] : [];
    }
    case "ed25519":
      return ["EdDSA", "Ed25519"];
    default:
      return [];
  }
}

function fixedKey(text: string, configured: readonly string[]): JwtKeySource {
  const trimmed = text.trim();
  let key: KeyObject;
  let jwkAlg: string | undefined;
  if (trimmed.startsWith("{")) {
    let jwk: Record<string, unknown>;
    try {
      jwk = JSON.parse(trimmed) as Record<string, unknown>;
    } catch {
      throw new Error("auth.jwt.publicKey: starts with '{' but is not valid JSON (expected one JWK, or a PEM public key)");
    }
    if (jwk.kty === "oct")
      throw new Error("auth.jwt.publicKey: a symmetric key (kty 'oct') is not accepted: taskgate verifies with public keys only");
    if ("d" in jwk) throw new Error("auth.jwt.publicKey: this JWK is a private key (it has 'd'): configure the public key only");
    try {
      key = createPublicKey({ key: jwk as never, format: "jwk" });
    } catch (error) {
      throw new Error(`auth.jwt.publicKey: not a usable public JWK (${(error as Error).message})`);
    }
    jwkAlg = typeof jwk.alg === "string" ? jwk.alg : undefined;
  } else {
    if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(trimmed)) {
      throw new Error("auth.jwt.publicKey: this PEM is a private key: configure the public key only (BEGIN PUBLIC KEY)");
    }
    if (!/-----BEGIN [A-Z ]*PUBLIC KEY-----/.test(trimmed)) {
      throw new Error("auth.jwt.publicKey: expected a PEM public key (-----BEGIN PUBLIC KEY-----) or one JWK as JSON");
    }
    try {
      key = createPublicKey(trimmed);
    } catch (error) {
      throw new Error(`auth.jwt.publicKey: the PEM cannot be read (${(error as Error).message})`);
    }
  }
  const fits = algorithmsFor(key);
  const allowed = configured.filter((alg) => fits.includes(alg) && (jwkAlg === undefined || alg === jwkAlg));
  if (allowed.length === 0) {
    const curve = key.asymmetricKeyDetails?.namedCurve ? ` ${key.asymmetricKeyDetails.namedCurve}` : "";
    const what = `${key.asymmetricKeyType ?? "unknown"}${curve} key${jwkAlg ? ` with alg ${jwkAlg}` : ""}`;
    throw new Error(
      `auth.jwt.algorithms: none of ${configured.join(", ")} can be verified with the configured publicKey ` +
        `(a ${what} verifies ${fits.join(", ") || "nothing taskgate accepts"})`,
    );
  }
  return { key, algorithms: allowed };
}
