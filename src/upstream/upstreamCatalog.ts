// What taskgate remembers about the upstream's tools, per session capability profile (a server may
// list some tools only to clients that can answer their questions; with upstream.sessionsPer
// "identity" every session declares the same, so there is one list): their names, 2025-11-25
// `execution.taskSupport` and x-mcp-header arguments. Read from tools/list on the caller's own
// session, again after the upstream says its tools changed; a name not in the list is looked up
// again at most once per UNKNOWN_RELOAD_MS, so unknown-tool calls do not each hit the upstream.

import { type ParamHeaders, paramHeadersOf } from "../protocol/paramHeaders.js";
import type { JsonObject } from "../protocol/wire.js";
import { isObject } from "../util/json.js";
import type { LegacyClientCapabilities } from "./capabilityProfile.js";
import type { UpstreamPool } from "./upstreamPool.js";

export interface ToolFacts {
  known: boolean;
  taskSupport?: string;
  /** Mcp-Param-* headers the tool's arguments must be mirrored in. */
  paramHeaders?: ParamHeaders;
}

interface KnownTool {
  taskSupport?: string;
  paramHeaders: ParamHeaders;
  /** What describe() answers for it (made once: the facts do not change until the list is read again). */
  facts: ToolFacts;
}

interface Listing {
  tools: Promise<Map<string, KnownTool>>;
  /** The same map once it loaded: a known tool is described without awaiting anything. */
  loaded?: Map<string, KnownTool>;
  loadedAt: number;
}

const UNKNOWN: ToolFacts = Object.freeze({ known: false });

/** An unknown tool name reloads the list at most this often (per profile). */
const UNKNOWN_RELOAD_MS = 30_000;

export class UpstreamCatalog {
  private readonly listings = new Map<string, Listing>();

  constructor(private readonly pool: UpstreamPool) {}

  /** What the upstream shows a client of `profile` about `tool`. Throws when the upstream cannot be asked. */
  async describe(owner: string, profile: LegacyClientCapabilities, tool: string): Promise<ToolFacts> {
    const key = this.pool.sessionKey(profile);
    let tools = await this.current(owner, profile, key);
    if (!tools.has(tool) && Date.now() - (this.listings.get(key)?.loadedAt ?? 0) >= UNKNOWN_RELOAD_MS) {
      this.invalidate(key);
      tools = await this.current(owner, profile, key);
    }
    return tools.get(tool)?.facts ?? UNKNOWN;
  }

  /** What describe() would answer, when the list is loaded and names `tool`; else undefined (ask describe()). */
  knownNow(profile: LegacyClientCapabilities, tool: string): ToolFacts | undefined {
    return this.listings.get(this.pool.sessionKey(profile))?.loaded?.get(tool)?.facts;
  }

  /** Forget what we know for one session profile key (its tools changed), or for all. */
  invalidate(key?: string): void {
    if (key === undefined) this.listings.clear();
    else this.listings.delete(key);
  }

  private current(owner: string, profile: LegacyClientCapabilities, key: string): Promise<Map<string, KnownTool>> {
    let listing = this.listings.get(key);
    if (!listing) {
      const tools = this.load(owner, profile);
      listing = { tools, loadedAt: Date.now() };
      this.listings.set(key, listing);
      const made = listing;
      tools.then(
        (loaded) => {
          made.loaded = loaded;
        },
        () => {
          if (this.listings.get(key) === made) this.listings.delete(key);
        },
      );
    }
    return listing.tools;
  }

  private async load(owner: string, profile: LegacyClientCapabilities): Promise<Map<string, KnownTool>> {
    const tools = new Map<string, KnownTool>();
    let cursor: string | undefined;
    do {
      const page = await this.pool.request(owner, profile, "tools/list", cursor ? { cursor } : {});
      for (const tool of Array.isArray(page.tools) ? (page.tools as JsonObject[]) : []) {
        if (!isObject(tool) || typeof tool.name !== "string") continue;
        const execution = isObject(tool.execution) ? tool.execution : {};
        const taskSupport = typeof execution.taskSupport === "string" ? execution.taskSupport : undefined;
        const paramHeaders = paramHeadersOf(tool.inputSchema);
        const facts: ToolFacts = { known: true, paramHeaders, ...(taskSupport ? { taskSupport } : {}) };
        tools.set(tool.name, { paramHeaders, facts, ...(taskSupport ? { taskSupport } : {}) });
      }
      cursor = typeof page.nextCursor === "string" ? page.nextCursor : undefined;
    } while (cursor);
    return tools;
  }
}
