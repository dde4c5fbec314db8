// What taskgate remembers about the upstream's tools: their names and 2025-11-25
// `execution.taskSupport` hints, read from tools/list once and again after the upstream says its
// tools changed (or a call names a tool we have not seen, in case the list moved on).

import type { JsonObject } from "../protocol/wire.js";
import type { UpstreamPool } from "./upstreamPool.js";

export interface ToolFacts {
  known: boolean;
  taskSupport?: string;
}

export class UpstreamCatalog {
  private tools?: Promise<Map<string, string | undefined>>;

  constructor(private readonly pool: UpstreamPool) {}

  /** undefined when the upstream cannot be asked (the call itself will report that). */
  async describe(tool: string): Promise<ToolFacts | undefined> {
    let tools = await this.current();
    if (tools && !tools.has(tool)) {
      this.invalidate();
      tools = await this.current();
    }
    if (!tools) return undefined;
    const taskSupport = tools.get(tool);
    return { known: tools.has(tool), ...(taskSupport ? { taskSupport } : {}) };
  }

  /** Forget what we know (tools/list_changed from the upstream). */
  invalidate(): void {
    this.tools = undefined;
  }

  private async current(): Promise<Map<string, string | undefined> | undefined> {
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

  private async load(): Promise<Map<string, string | undefined>> {
    const tools = new Map<string, string | undefined>();
    let cursor: string | undefined;
    do {
      const page = await this.pool.request({}, "tools/list", cursor ? { cursor } : {});
      for (const tool of (page.tools as JsonObject[] | undefined) ?? []) {
        if (typeof tool.name === "string") tools.set(tool.name, (tool.execution as { taskSupport?: string } | undefined)?.taskSupport);
      }
      cursor = typeof page.nextCursor === "string" ? page.nextCursor : undefined;
    } while (cursor);
    return tools;
  }
}
