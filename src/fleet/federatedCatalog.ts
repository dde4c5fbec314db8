// The federated catalog: one list per kind merged from the backends' own lists, in the order the
// backends are configured. Tools and prompts are shown as `<backend><separator><name>`
// (federatedNames.ts); resources and resource templates keep their own URIs. Contract:
//
// - Every entry that is shown has a route: the backend that listed it and its name (or URI) there.
//   The federated endpoint routes calls by this table only.
// - Two entries with the same shown key (a URI two backends list, or names equal after prefixing
//   or rewriting) are a collision: the first backend's entry is kept, the later one is left out and
//   reported, never silently shadowed.
// - A backend that could not be asked is left out and listed in `missing` with the reason, so the
//   answer can say so; it is back in the next merge once it answers.
// - Pure: no I/O; the caller fetches the lists and reports what this returns (log + metric).

import { federatedName } from "../protocol/federatedNames.js";
import type { JsonObject } from "../protocol/wire.js";

export type CatalogKind = "tools" | "prompts" | "resources" | "resourceTemplates";

/** What one backend listed of a kind, or why it could not be asked. */
export type BackendListing = { backend: string; items: JsonObject[] } | { backend: string; missing: string };

export interface CatalogRoute {
  backend: string;
  /** The entry's name (tools, prompts) or URI / URI template (resources) on that backend. */
  key: string;
}

export interface Collision {
  kind: CatalogKind;
  /** The shown name or URI both entries would have. */
  shown: string;
  /** The backend whose entry is shown. */
  kept: string;
  /** The backend whose entry was left out. */
  leftOut: string;
  /** Its own name or URI there. */
  leftOutKey: string;
}

export interface Rewrite {
  backend: string;
  original: string;
  shown: string;
  why: string;
}

export interface MergedCatalog {
  items: JsonObject[];
  /** Shown name or URI → where it goes. */
  routes: Map<string, CatalogRoute>;
  collisions: Collision[];
  rewritten: Rewrite[];
  missing: Array<{ backend: string; reason: string }>;
}

/** The field that names an entry of each kind. */
const KEY_FIELD: Record<CatalogKind, string> = { tools: "name", prompts: "name", resources: "uri", resourceTemplates: "uriTemplate" };
const PREFIXED = new Set<CatalogKind>(["tools", "prompts"]);

export function mergeCatalog(kind: CatalogKind, listings: readonly BackendListing[], separator: string): MergedCatalog {
  const merged: MergedCatalog = { items: [], routes: new Map(), collisions: [], rewritten: [], missing: [] };
  const field = KEY_FIELD[kind];
  for (const listing of listings) {
    if ("missing" in listing) {
      merged.missing.push({ backend: listing.backend, reason: listing.missing });
      continue;
    }
    const { backend } = listing;
    for (const item of listing.items) {
      const key = item[field];
      if (typeof key !== "string") continue; // not an entry the backend could be asked for again
      let shown = key;
      if (PREFIXED.has(kind)) {
        const named = federatedName(backend, separator, key);
        shown = named.name;
        if (named.rewritten) merged.rewritten.push({ backend, original: key, shown, why: named.rewritten });
      }
      const taken = merged.routes.get(shown);
      if (taken) {
        merged.collisions.push({ kind, shown, kept: taken.backend, leftOut: backend, leftOutKey: key });
        continue;
      }
      merged.routes.set(shown, { backend, key });
      merged.items.push(shown === key ? item : { ...item, [field]: shown });
    }
  }
  return merged;
}

/**
 * The backend of a resource URI: the one that listed it, else the one whose URI template's literal
 * head (the text before its first `{`) is the longest prefix of the URI. Undefined: nobody listed it.
 */
export function routeResource(uri: string, resources: MergedCatalog, templates: MergedCatalog): CatalogRoute | undefined {
  const listed = resources.routes.get(uri);
  if (listed) return { backend: listed.backend, key: uri };
  let best: { backend: string; head: number } | undefined;
  for (const [template, route] of templates.routes) {
    const brace = template.indexOf("{");
    const head = brace === -1 ? template : template.slice(0, brace);
    if (head.length > 0 && uri.startsWith(head) && (best === undefined || head.length > best.head)) {
      best = { backend: route.backend, head: head.length };
    }
  }
  return best ? { backend: best.backend, key: uri } : undefined;
}
