// Writes one SSE response: headers once, one `data:` event per JSON-RPC message, comment
// keep-alives so proxies keep the stream open. No event ids: 2026-07-28 has no resumption.
// A client that stops reading is cut off once `maxBufferedBytes` wait in the socket, instead of
// letting frames pile up in memory; its 'close' then releases whatever the stream held.

import type { ServerResponse } from "node:http";

export const DEFAULT_MAX_BUFFERED_BYTES = 1_048_576;

export class SseWriter {
  private keepAlive?: NodeJS.Timeout;

  constructor(
    private readonly res: ServerResponse,
    keepAliveMs = 15_000,
    private readonly maxBufferedBytes = DEFAULT_MAX_BUFFERED_BYTES,
  ) {
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
    this.write(`data: ${JSON.stringify(message)}\n\n`);
  }

  /** A named event (`event: <name>`), for streams read by EventSource rather than by MCP clients. */
  sendEvent(name: string, message: unknown): void {
    this.write(`event: ${name}\ndata: ${JSON.stringify(message)}\n\n`);
  }

  comment(text: string): void {
    this.write(`: ${text}\n\n`);
  }

  end(): void {
    clearInterval(this.keepAlive);
    if (this.open) this.res.end();
  }

  private write(chunk: string): void {
    if (!this.open) return;
    if (this.res.writableLength > this.maxBufferedBytes) {
      clearInterval(this.keepAlive);
      this.res.destroy(new Error("SSE client is not reading; stream cut off"));
      return;
    }
    this.res.write(chunk);
  }
}
