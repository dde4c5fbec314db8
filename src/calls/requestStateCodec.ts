// Seals and opens MRTR `requestState`: a handle to a held upstream call, integrity-protected
// with HMAC-SHA256 and bound to the caller, the method, the tool/prompt/resource name, a digest
// of the arguments, an expiry and a one-time round nonce. Opening says exactly what is wrong.

import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export interface RequestStateClaims {
  /** Held call id. */
  held: string;
  /** Round nonce: usable once. */
  round: string;
  /** Owner hash of the caller. */
  owner: string;
  method: string;
  name: string;
  /** sha256 of the canonical arguments. */
  args: string;
  /** Expiry, ms since epoch. */
  exp: number;
}

export type OpenResult = { ok: true; claims: RequestStateClaims } | { ok: false; reason: string };

/** Stable digest of a JSON value: object keys sorted, so equal arguments hash equal. */
export function argumentsDigest(value: unknown): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v && typeof v === "object"
        ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]))
        : v;
  return createHash("sha256").update(JSON.stringify(canonical(value ?? {}))).digest("base64url");
}

export class RequestStateCodec {
  private readonly key: Buffer;

  constructor(secret?: string) {
    this.key = secret ? Buffer.from(secret, "utf8") : randomBytes(32);
  }

  seal(claims: RequestStateClaims): string {
    const payload = Buffer.from(JSON.stringify(claims)).toString("base64url");
    return `${payload}.${this.mac(payload)}`;
  }

  open(token: unknown, now = Date.now()): OpenResult {
    if (typeof token !== "string" || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) {
      return { ok: false, reason: "requestState is malformed: echo it exactly as taskgate sent it" };
    }
    const [payload, mac] = token.split(".") as [string, string];
    const expected = Buffer.from(this.mac(payload));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
      return { ok: false, reason: "requestState failed its integrity check: it was altered or was not issued by this gateway" };
    }
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as RequestStateClaims;
    if (claims.exp <= now) return { ok: false, reason: "requestState has expired: the held call was given up; call the tool again" };
    return { ok: true, claims };
  }

  private mac(payload: string): string {
    return createHmac("sha256", this.key).update(payload).digest("base64url");
  }
}
