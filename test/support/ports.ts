// freePort(): a TCP port on 127.0.0.1 that was free a moment ago, for processes that must be told
// their port up front (redis-server, a restart on the same port) and for "nothing listens there"
// upstream URLs. It is picked below the kernel's ephemeral range: a port from listen(0) is one the
// kernel also hands to outgoing connections, so under a busy parallel run it could be taken by
// one between our close and the child's listen (EADDRINUSE). onFreePort() starts something on a
// fresh port and tries again, on another, when the port was taken all the same.

import { readFileSync } from "node:fs";
import { createServer } from "node:net";

const LOWEST = 10_000;
const handedOut = new Set<number>();

/** The first port of the kernel's ephemeral range (Linux), else the IANA one. */
function ephemeralStart(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > LOWEST + 1000) return low;
  } catch {
    // not Linux: the IANA range
  }
  return 49_152;
}
const ABOVE = ephemeralStart();

function tryListen(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(undefined));
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      const bound = typeof address === "object" && address ? address.port : undefined;
      server.close(() => resolve(bound));
    });
  });
}

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (ABOVE - LOWEST));
    if (handedOut.has(port)) continue;
    if ((await tryListen(port)) === port) {
      handedOut.add(port);
      return port;
    }
  }
  // Everything below the ephemeral range looked taken: let the kernel choose.
  const port = await tryListen(0);
  if (port === undefined) throw new Error("no free port on 127.0.0.1");
  return port;
}

/** An http://127.0.0.1:<port>/mcp URL where, at this moment, nothing listens. */
export async function deadUpstreamUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}/mcp`;
}

const PORT_TAKEN = /EADDRINUSE|address already in use/i;

/** start(port) on a free port; when it fails because that port was taken after all, again on another (3 tries). */
export async function onFreePort<T>(start: (port: number) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePort());
    } catch (error) {
      if (attempt >= 3 || !PORT_TAKEN.test(error instanceof Error ? error.message : String(error))) throw error;
    }
  }
}
