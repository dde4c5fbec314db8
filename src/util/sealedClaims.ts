// SealedClaims: small JSON claims sealed with AES-256-GCM for one purpose, under a key derived
// (HKDF-SHA256) from mrtr.secret (random per process when unset), so any instance with the same
// secret opens them and a restart keeps them. The IV is derived from the claims (as in SIV): the
// same claims always give the same token, so a handle handed out twice is the same string. Nothing
// in a token is readable and any change is detected. It seals the handles taskgate gives out for a
// modern backend's own values: its task ids and its requestState.

import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";

const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SealedClaims {
  private readonly key: Buffer;
  private readonly ivKey: Buffer;

  /** `info`: what the tokens are for (keys differ per purpose, so one kind never opens as another). */
  constructor(secret: string | undefined, info: string) {
    const material = secret === undefined ? randomBytes(32) : Buffer.from(secret, "utf8");
    this.key = Buffer.from(hkdfSync("sha256", material, Buffer.alloc(0), info, 32));
    this.ivKey = Buffer.from(hkdfSync("sha256", material, Buffer.alloc(0), `${info} iv`, 32));
  }

  /** The claims sealed, base64url. */
  seal(claims: Record<string, unknown>): string {
    const text = JSON.stringify(claims);
    const iv = createHmac("sha256", this.ivKey).update(text).digest().subarray(0, IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const body = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url");
  }

  /** The claims of a token this purpose's key sealed; undefined for anything else (malformed, altered, another key's). */
  open(token: string): Record<string, unknown> | undefined {
    const bytes = Buffer.from(token, "base64url");
    if (bytes.length <= IV_BYTES + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, bytes.subarray(0, IV_BYTES));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      const plain = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
      const claims: unknown = JSON.parse(plain.toString("utf8"));
      return typeof claims === "object" && claims !== null && !Array.isArray(claims) ? (claims as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  }
}
