// freePort(): a TCP port on 127.0.0.1 that was free a moment ago (listen on 0, read it, close),
// for processes that must be told their port up front (redis-server, a restart on the same port)
// and for "nothing listens there" upstream URLs.

import { createServer } from "node:net";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error("no port assigned"))));
    });
  });
}

/** An http://127.0.0.1:<port>/mcp URL where, at this moment, nothing listens. */
export async function deadUpstreamUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}/mcp`;
}
