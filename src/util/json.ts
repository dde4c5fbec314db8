// The one test for "a JSON object" (not null, not an array), used wherever untrusted JSON is read.

export type JsonObject = { [key: string]: unknown };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
