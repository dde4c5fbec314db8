// A TCP server on 127.0.0.1 that is no MCP server, for upstream faults taskgate cannot cause any
// other way (named as such in the tests that use it):
//   silent: accepts every connection and never sends a byte (a hung process behind a live port);
//   html:   answers every request HTTP 200 with an HTML page (a web server where the MCP endpoint
//           was expected);
//   reset:  accepts, then resets the connection (RST) as soon as the request starts arriving.
// close() destroys every connection it holds.

import { createServer, type Socket } from "node:net";

export type BlackholeMode = "silent" | "html" | "reset";

export interface Blackhole {
  /** http://127.0.0.1:<port>/mcp */
  url: string;
  port: number;
  /** Connections accepted so far. */
  accepted(): number;
  close(): Promise<void>;
}

export const BLACKHOLE_HTML = "<!doctype html><html><head><title>Welcome</title></head><body><h1>It works!</h1></body></html>";

function answerHtml(socket: Socket): void {
  let head = "";
  socket.setEncoding("latin1");
  socket.on("data", (chunk: string) => {
    head += chunk;
    // Answer each request once its headers are in; the body (if any) is simply not read.
    if (!head.includes("\r\n\r\n")) return;
    head = "";
    socket.write(
      `HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(BLACKHOLE_HTML)}\r\nConnection: keep-alive\r\n\r\n${BLACKHOLE_HTML}`,
    );
  });
}

export async function startBlackhole(mode: BlackholeMode): Promise<Blackhole> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined); // the peer going away is expected here
    if (mode === "html") answerHtml(socket);
    else if (mode === "reset") socket.once("data", () => socket.resetAndDestroy());
    // silent: nothing, ever
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    accepted: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
