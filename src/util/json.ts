// The one test for "a JSON object" (not null, not an array), used wherever untrusted JSON is read,
// and the one digest of a JSON value (canonical JSON: object keys sorted; sha256, base64url), which
// binds a requestState and an approval to the exact arguments of their call.

import { createHash } from "node:crypto";

export type JsonObject = { [key: string]: unknown };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Stable digest of a JSON value: object keys sorted, so equal arguments hash equal; undefined is {}. */
export function argumentsDigest(value: unknown): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
          )
        : v;
  return createHash("sha256")
    .update(JSON.stringify(canonical(value ?? {})))
    .digest("base64url");
}
