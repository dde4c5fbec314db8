// Writes one SSE response: headers once, one `data:` event per JSON-RPC message, comment
// keep-alives so proxies keep the stream open. No event ids: 2026-07-28 has no resumption.

import type { ServerResponse } from "node:http";

export class SseWriter {
  private keepAlive?: NodeJS.Timeout;

  constructor(private readonly res: ServerResponse, keepAliveMs = 15_000) {
    res.writeHead(200, {
      "Content-Type": "text/event-stream",
      "Cache-Control": "no-cache, no-transform",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    });
    res.flushHeaders();
    this.keepAlive = setInterval(() => this.comment("keep-alive"), keepAliveMs).unref();
  }

  get open(): boolean {
    return !this.res.writableEnded && !this.res.destroyed;
  }

  send(message: unknown): void {
    if (this.open) this.res.write(`data: ${JSON.stringify(message)}\n\n`);
  }

  comment(text: string): void {
    if (this.open) this.res.write(`: ${text}\n\n`);
  }

  end(): void {
    clearInterval(this.keepAlive);
    if (this.open) this.res.end();
  }
}
