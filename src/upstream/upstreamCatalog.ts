// What taskgate remembers about the upstream's tools: their names, 2025-11-25
// `execution.taskSupport` hints and x-mcp-header arguments, read from tools/list once and again after the upstream says its
// tools changed (or a call names a tool we have not seen, in case the list moved on).

import { paramHeadersOf, type ParamHeaders } from "../protocol/paramHeaders.js";
import type { JsonObject } from "../protocol/wire.js";
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
}

export class UpstreamCatalog {
  private tools?: Promise<Map<string, KnownTool>>;

  constructor(private readonly pool: UpstreamPool) {}

  /** undefined when the upstream cannot be asked (the call itself will report that). */
  async describe(tool: string): Promise<ToolFacts | undefined> {
    let tools = await this.current();
    if (tools && !tools.has(tool)) {
      this.invalidate();
      tools = await this.current();
    }
    if (!tools) return undefined;
    const known = tools.get(tool);
    if (!known) return { known: false };
    return { known: true, paramHeaders: known.paramHeaders, ...(known.taskSupport ? { taskSupport: known.taskSupport } : {}) };
  }

  /** Forget what we know (tools/list_changed from the upstream). */
  invalidate(): void {
    this.tools = undefined;
  }

  private async current(): Promise<Map<string, KnownTool> | undefined> {
    this.tools ??= this.load().catch((error: unknown) => {
      this.tools = undefined;
      throw error;
    });
    try {
      return await this.tools;
    } catch {
      return undefined;
    }
  }

  private async load(): Promise<Map<string, KnownTool>> {
    const tools = new Map<string, KnownTool>();
    let cursor: string | undefined;
    do {
      const page = await this.pool.request({}, "tools/list", cursor ? { cursor } : {});
      for (const tool of (page.tools as JsonObject[] | undefined) ?? []) {
        if (typeof tool.name !== "string") continue;
        const taskSupport = (tool.execution as { taskSupport?: string } | undefined)?.taskSupport;
        tools.set(tool.name, { paramHeaders: paramHeadersOf(tool.inputSchema), ...(taskSupport ? { taskSupport } : {}) });
      }
      cursor = typeof page.nextCursor === "string" ? page.nextCursor : undefined;
    } while (cursor);
    return tools;
  }
}
