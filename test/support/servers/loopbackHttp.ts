// An HTTP server of a fake upstream on 127.0.0.1 (a free port): its /mcp URL, and a close() that
// destroys the connections it holds first (a fake's held streams would keep server.close() waiting).

import { createServer, type RequestListener } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface LoopbackHttp {
  /** http://127.0.0.1:<port>/mcp */
  url: string;
  close(): Promise<void>;
}

export async function listenOnLoopback(handler: RequestListener): Promise<LoopbackHttp> {
  const sockets = new Set<Socket>();
  const server = createServer(handler);
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
