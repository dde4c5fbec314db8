// Role "sseServer": an SSE endpoint that keeps every response open, the far end of the
// streamFloor role's streams (in a process of its own, as taskgate's upstream is). Each GET gets
// its headers and one comment line at once, then nothing until the client goes away.
// "open" → how many responses it holds right now.

import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { serveRole } from "./serveRole.js";

/** Connections arrive in bursts of thousands: Node's default backlog (511) would drop some. */
const BACKLOG = 4096;

await serveRole("sseServer", async () => {
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    open.add(res);
    res.on("close", () => open.delete(res));
    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
    res.write(": held\n\n");
  });
  // Held streams send nothing: Node's request timeouts must not end them.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port: 0, host: "127.0.0.1", backlog: BACKLOG }, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    info: { url: `http://127.0.0.1:${port}/sse`, port },
    handlers: { open: () => open.size },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
});
