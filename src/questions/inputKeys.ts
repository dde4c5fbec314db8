// Mints the inputRequests key of an upstream question: readable and stable, never reused within
// one task's life. Rule: a key configured for the tool wins; else the single property name of a
// form's requestedSchema; else a short name from the schema's properties or the message; then a
// numeric suffix while the key is taken.

import type { InputRequest } from "../protocol/wire.js";

const MAX_BASE = 40;

const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, MAX_BASE)
    .replace(/_+$/g, "");

function baseKey(request: InputRequest): string {
  if (request.method === "sampling/createMessage") return "sampling";
  if (request.method === "roots/list") return "roots";
  const params = request.params as { mode?: string; message?: string; requestedSchema?: { properties?: Record<string, unknown> } };
  if (params.mode === "url") return slug(params.message ?? "") || "authorization";
  const properties = Object.keys(params.requestedSchema?.properties ?? {});
  if (properties.length === 1) return slug(properties[0]!) || "input";
  if (properties.length > 1) return slug(properties.slice(0, 3).join("_")) || "input";
  return slug(params.message ?? "") || "input";
}

export function mintInputKey(request: InputRequest, used: ReadonlySet<string>, configured?: string): string {
  const base = configured ?? baseKey(request);
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}_${n}`;
    if (!used.has(candidate)) return candidate;
  }
}
