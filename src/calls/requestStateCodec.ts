// Seals and opens MRTR `requestState`: a handle to a held upstream call and the instance holding
// it, bound to the caller, the endpoint (a fleet's path), the method, the tool/prompt/resource
// name, a digest of the arguments, an expiry and a one-time round nonce. Sealed with AES-256-GCM,
// so nothing in it is readable (not the owner hash, not the tool name) and any change is detected.
// Opening says exactly what is wrong: malformed, sealed under another key (another taskgate
// process), altered, or expired.
//
// Key: HKDF-SHA256 from mrtr.secret (so every instance with the same secret shares it, and it
// survives restarts), or random per process when unset. A short key id, derived from the same
// secret, travels in the token (authenticated as associated data), which is how a state sealed by
// another process is told apart from an altered one.
//
// Token: `<box>.<seal>`, both base64url: box = IV (12 bytes) ‖ ciphertext of the JSON claims;
// seal = format version (1 byte) ‖ key id (6 bytes) ‖ GCM tag (16 bytes).

import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { argumentsDigest } from "../util/json.js";

export interface RequestStateClaims {
  /** Held call id. */
  held: string;
  /** The taskgate instance holding the call (absent in states sealed before it was carried: this instance). */
  holder?: string;
  /** Round nonce: usable once. */
  round: string;
  /** Owner hash of the caller. */
  owner: string;
  method: string;
  name: string;
  /** sha256 of the canonical arguments. */
  args: string;
  /** The MCP path that issued it (a fleet's): it answers only there (absent: no fleet, or sealed before it was carried). */
  endpoint?: string;
  /** Expiry, ms since epoch. */
  exp: number;
}

export type OpenResult = { ok: true; claims: RequestStateClaims } | { ok: false; reason: string };

/** Stable digest of a JSON value (util/json.ts): a requestState is bound to its arguments by it. */
export { argumentsDigest };

const VERSION = 1;
const IV_BYTES = 12;
const KID_BYTES = 6;
const TAG_BYTES = 16;
const SEAL_BYTES = 1 + KID_BYTES + TAG_BYTES;
const SALT = "taskgate requestState";

export const REQUEST_STATE_REASONS = {
  malformed: "requestState is malformed: echo it exactly as taskgate sent it",
  otherKey:
    "requestState was sealed by another taskgate process (restarted without mrtr.secret, or instances with different " +
    "mrtr.secret): call again, and set the same mrtr.secret on every instance",
  altered: "requestState failed its integrity check: it was altered or was not issued by this gateway",
  expired: "requestState has expired: the held call was given up; call the tool again",
} as const;

const isClaims = (v: unknown): v is RequestStateClaims => {
  const c = v as Record<string, unknown> | null;
  return (
    typeof c === "object" &&
    c !== null &&
    ["held", "round", "owner", "method", "name", "args"].every((k) => typeof c[k] === "string") &&
    typeof c.exp === "number" &&
    (c.holder === undefined || typeof c.holder === "string") &&
    (c.endpoint === undefined || typeof c.endpoint === "string")
  );
};

export class RequestStateCodec {
  private readonly key: Buffer;
  private readonly kid: Buffer;

  constructor(secret?: string) {
    if (secret) {
      const ikm = Buffer.from(secret, "utf8");
      this.key = Buffer.from(hkdfSync("sha256", ikm, SALT, "aes-256-gcm key v1", 32));
      this.kid = Buffer.from(hkdfSync("sha256", ikm, SALT, "key id v1", KID_BYTES));
    } else {
      this.key = randomBytes(32);
      this.kid = randomBytes(KID_BYTES);
    }
  }

  seal(claims: RequestStateClaims): string {
    const iv = randomBytes(IV_BYTES);
    const header = Buffer.concat([Buffer.of(VERSION), this.kid]);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(header);
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(claims), "utf8"), cipher.final()]);
    const box = Buffer.concat([iv, ciphertext]).toString("base64url");
    const seal = Buffer.concat([header, cipher.getAuthTag()]).toString("base64url");
    return `${box}.${seal}`;
  }

  open(token: unknown, now = Date.now()): OpenResult {
    if (typeof token !== "string" || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) {
      return { ok: false, reason: REQUEST_STATE_REASONS.malformed };
    }
    const [boxText, sealText] = token.split(".") as [string, string];
    const box = Buffer.from(boxText, "base64url");
    const seal = Buffer.from(sealText, "base64url");
    if (seal.length !== SEAL_BYTES || seal[0] !== VERSION || box.length <= IV_BYTES) {
      return { ok: false, reason: REQUEST_STATE_REASONS.malformed };
    }
    const header = seal.subarray(0, 1 + KID_BYTES);
    if (!header.subarray(1).equals(this.kid)) return { ok: false, reason: REQUEST_STATE_REASONS.otherKey };

    let claims: unknown;
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, box.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(header);
      decipher.setAuthTag(seal.subarray(1 + KID_BYTES));
      const plaintext = Buffer.concat([decipher.update(box.subarray(IV_BYTES)), decipher.final()]);
      claims = JSON.parse(plaintext.toString("utf8"));
    } catch {
      return { ok: false, reason: REQUEST_STATE_REASONS.altered };
    }
    if (!isClaims(claims)) return { ok: false, reason: REQUEST_STATE_REASONS.altered };
    if (claims.exp <= now) return { ok: false, reason: REQUEST_STATE_REASONS.expired };
    return { ok: true, claims };
  }
}
