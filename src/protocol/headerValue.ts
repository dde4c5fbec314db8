// decodeHeaderValue: turns one raw MCP header value into the string to compare with the body.
// Contract: surrounding optional whitespace (SP/HTAB) is trimmed; `=?base64?<payload>?=` (lowercase
// markers, case-sensitive) is decoded as strict, canonical base64 of valid UTF-8; a value with only
// the prefix or only the suffix is a literal. Control or non-ASCII characters in the raw value, bad
// base64 and invalid UTF-8 yield { ok: false, reason }. Never throws.

export type DecodedHeaderValue = { ok: true; value: string } | { ok: false; reason: string };

const PREFIX = "=?base64?";
const SUFFIX = "?=";
const BASE64_SHAPE = /^[A-Za-z0-9+/]*={0,2}$/;
// Raw (pre-decode) values must be visible ASCII or space; anything else must travel base64-encoded.
const CONTROL_CHAR = /[\u0000-\u001f\u007f]/;
const NON_ASCII = /[^\u0000-\u007f]/;

export function decodeHeaderValue(raw: string): DecodedHeaderValue {
  const value = trimOws(raw);
  if (CONTROL_CHAR.test(value)) return { ok: false, reason: "contains control characters" };
  if (NON_ASCII.test(value)) {
    return { ok: false, reason: "contains non-ASCII characters (send them as =?base64?...?=)" };
  }
  if (!isSentinel(value)) return { ok: true, value };
  return decodeBase64Utf8(value.slice(PREFIX.length, value.length - SUFFIX.length));
}

function trimOws(raw: string): string {
  return raw.replace(/^[ \t]+|[ \t]+$/g, "");
}

function isSentinel(value: string): boolean {
  return value.length >= PREFIX.length + SUFFIX.length && value.startsWith(PREFIX) && value.endsWith(SUFFIX);
}

function decodeBase64Utf8(payload: string): DecodedHeaderValue {
  if (!BASE64_SHAPE.test(payload)) return { ok: false, reason: "invalid base64: character outside the base64 alphabet" };
  if (payload.length % 4 !== 0) return { ok: false, reason: "invalid base64: length is not a multiple of 4 (bad padding)" };
  const bytes = Buffer.from(payload, "base64");
  // Node's decoder is lenient; re-encoding exposes misplaced padding and non-zero trailing bits.
  if (bytes.toString("base64") !== payload) return { ok: false, reason: "invalid base64: non-canonical encoding or padding" };
  try {
    return { ok: true, value: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes) };
  } catch {
    return { ok: false, reason: "base64 payload is not valid UTF-8" };
  }
}

export type HeaderMap = Record<string, string | string[] | undefined>;

/** Case-insensitive lookup; a one-element array is unwrapped, an empty one is absent. */
export function getHeader(headers: HeaderMap, name: string): string | string[] | undefined {
  const lower = name.toLowerCase();
  // Node's headers are lower-cased already: one own-property read, no scan and no closure, for every request.
  let value = Object.hasOwn(headers, lower) ? headers[lower] : undefined;
  if (value === undefined) {
    for (const key of Object.keys(headers)) {
      if (key.toLowerCase() === lower && headers[key] !== undefined) {
        value = headers[key];
        break;
      }
    }
  }
  if (!Array.isArray(value)) return value;
  return value.length <= 1 ? value[0] : value;
}

/** Shortens a value quoted in an error message (header values are attacker-sized). */
export function clip(value: string, max = 100): string {
  return value.length <= max ? value : `${value.slice(0, max)}…`;
}
