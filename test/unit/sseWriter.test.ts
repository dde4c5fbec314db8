// SseWriter against a real HTTP client on loopback: frames arrive as SSE events, and a client
// that stops reading is cut off instead of having frames pile up in the server's memory.

import assert from "node:assert/strict";
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, it } from "node:test";
import { SseWriter } from "../../src/http/sseWriter.js";

describe("SseWriter", () => {
  const servers: Array<ReturnType<typeof createServer>> = [];
  after(() => servers.forEach((s) => s.close()));

  async function serve(handler: (res: ServerResponse) => void): Promise<number> {
    const server = createServer((_req: IncomingMessage, res) => handler(res));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return (server.address() as AddressInfo).port;
  }

  it("sends data events, keep-alive comments and the SSE headers", async () => {
    const port = await serve((res) => {
      const sse = new SseWriter(res, 20);
      sse.send({ jsonrpc: "2.0", method: "x" });
      setTimeout(() => sse.end(), 70);
    });
    const response = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(response.headers.get("content-type"), "text/event-stream");
    assert.equal(response.headers.get("x-accel-buffering"), "no");
    const body = await response.text();
    assert.match(body, /^data: \{"jsonrpc":"2.0","method":"x"\}\n\n/);
    assert.match(body, /: keep-alive\n\n/);
  });

  it("cuts off a client that stops reading once the buffered bytes pass the limit", { timeout: 15_000 }, async () => {
    let closed!: () => void;
    const cutOff = new Promise<void>((resolve) => (closed = resolve));
    let sent = 0;
    const port = await serve((res) => {
      res.on("close", () => closed());
      const sse = new SseWriter(res, 60_000, 64 * 1024);
      const big = "x".repeat(16 * 1024);
      const pump = setInterval(() => {
        if (!sse.open) return clearInterval(pump);
        sse.send({ big });
        sent++;
      }, 1);
    });
    // A real client that reads the headers and then never reads the body.
    await new Promise<void>((resolve) => {
      const req = request({ host: "127.0.0.1", port, path: "/" }, (res) => {
        res.pause();
        resolve();
      });
      req.end();
    });
    await cutOff;
    // Socket buffers on both sides absorb some frames, but the writer stops soon after the limit.
    assert.ok(sent < 2000, `sent ${sent} frames to a client that never read`);
  });
});
