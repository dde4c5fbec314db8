// What taskgate remembers about the upstream's tools: their 2025-11-25 `execution.taskSupport`
// hints, read from tools/list once and read again after the upstream says its tools changed.

import type { JsonObject } from "../protocol/wire.js";
import type { UpstreamPool } from "./upstreamPool.js";

export class UpstreamCatalog {
  private taskSupport?: Promise<Map<string, string>>;

  constructor(private readonly pool: UpstreamPool) {}

  async taskSupportOf(tool: string): Promise<string | undefined> {
    this.taskSupport ??= this.load().catch((error: unknown) => {
      this.taskSupport = undefined;
      throw error;
    });
    try {
      return (await this.taskSupport).get(tool);
    } catch {
      return undefined; // the call itself will report the upstream problem
    }
  }

  /** Forget what we know (tools/list_changed from the upstream). */
  invalidate(): void {
    this.taskSupport = undefined;
  }

  private async load(): Promise<Map<string, string>> {
    const hints = new Map<string, string>();
    let cursor: string | undefined;
    do {
      const page = await this.pool.request({}, "tools/list", cursor ? { cursor } : {});
      for (const tool of (page.tools as JsonObject[] | undefined) ?? []) {
        const support = (tool.execution as { taskSupport?: string } | undefined)?.taskSupport;
        if (typeof tool.name === "string" && support) hints.set(tool.name, support);
      }
      cursor = typeof page.nextCursor === "string" ? page.nextCursor : undefined;
    } while (cursor);
    return hints;
  }
}
