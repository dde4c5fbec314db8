// Floor "proxy": the least a gateway in the path can cost — a plain node:http reverse proxy with a
// keep-alive agent, forwarding every request to the upstream unchanged and streaming the answer
// back. No parsing, no checks. The inline scenario reads taskgate's goals against this floor.

import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { roleArgs, serveRole } from "../roles/serveRole.js";

await serveRole("proxy-floor", async () => {
  const target = new URL(roleArgs<{ upstream: string }>().upstream);
  // Idle sockets closed after 4 s, before the upstream's 5 s keep-alive ends them: a request sent on one the upstream is
  // closing fails (a 502 here). Node 20's agent does not shorten its idle limit to the server's Keep-Alive hint itself.
  const agent = new Agent({ keepAlive: true, maxSockets: 64, timeout: 4_000 });
  const server = createServer((req, res) => {
    const out = request(
      { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers: req.headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on("error", () => res.writeHead(502).end());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    info: { url: `http://127.0.0.1:${port}/mcp`, port },
    close: async () => {
      server.closeAllConnections();
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
});
