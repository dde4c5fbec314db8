// Floor "stdio bridge": the least an HTTP front for a stdio server can do. It starts the server
// process once, initializes it, and per request: reads and parses the body, strips _meta, writes
// the request to the process's stdin as one line under an id of its own, matches the response
// line by id and answers the client as JSON with the client's id. No identity, no checks.

import { spawn } from "node:child_process";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { roleArgs, serveRole } from "../roles/serveRole.js";

type Json = Record<string, unknown>;

await serveRole("stdio-floor", async () => {
  const command = roleArgs<{ command: string[] }>().command;
  const child = spawn(command[0] as string, command.slice(1), { stdio: ["pipe", "pipe", "ignore"] });
  const waiting = new Map<number, (reply: Json) => void>();
  createInterface({ input: child.stdout }).on("line", (line) => {
    const reply = JSON.parse(line) as Json;
    const wake = waiting.get(reply.id as number);
    if (wake) {
      waiting.delete(reply.id as number);
      wake(reply);
    }
  });
  let nextId = 1;
  const send = (method: string, params: Json) =>
    new Promise<Json>((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  await send("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "stdio-floor", version: "1" } });
  child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');

  const reply = (res: ServerResponse, body: string) =>
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: unknown; method: string; params?: Json };
      const { _meta, ...params } = message.params ?? {};
      void send(message.method, params).then((answer) => reply(res, JSON.stringify({ ...answer, id: message.id })));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    info: { url: `http://127.0.0.1:${port}/mcp`, port, serverPid: child.pid },
    close: async () => {
      server.closeAllConnections();
      child.kill();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
});
