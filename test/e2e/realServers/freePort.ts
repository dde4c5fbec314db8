// A TCP port that is free on 127.0.0.1 right now: listen on port 0, read the port, close. For
// servers that cannot report the port they bound (server-everything logs "port 0" for PORT=0).

import { createServer } from "node:net";

export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => (port > 0 ? resolve(port) : reject(new Error("could not read the probe's port"))));
    });
  });
}
