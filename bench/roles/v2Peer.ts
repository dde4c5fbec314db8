// Role "v2peer": a native 2026-07-28 server built on the official v2 SDK (@modelcontextprotocol/
// server createMcpHandler, served on node:http through @modelcontextprotocol/node), the peer
// taskgate's tasks/get is compared with. The v2 SDK has no runtime for the tasks extension, but it
// lets a server register tasks/get as an extension method with its own params schema, so this
// peer answers tasks/get with the same work as the floor (bearer → sha256 owner, Map lookup,
// owner compared, DetailedTask) inside the SDK's own per-request pipeline: envelope and header
// validation, a fresh McpServer per request from the factory, the fetch-API Request/Response
// conversion. It also has `greet`, for reference. "seed" as in the floor role.

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { createMcpHandler, McpServer, ProtocolError } from "@modelcontextprotocol/server";
import { z } from "zod";
import { detailedTask, ownerHash, type StoredTask, TASKS_EXTENSION, workingTask } from "../lib/taskShape.js";
import { serveRole } from "./serveRole.js";

const TaskIdParams = z.looseObject({ taskId: z.string().min(1) });

await serveRole("v2peer", async () => {
  const tasks = new Map<string, StoredTask>();
  let errors = 0;

  const factory = () => {
    const mcp = new McpServer({ name: "bench-v2-peer", version: "1.0.0" }, { capabilities: { tools: {} } });
    mcp.registerTool("greet", { description: "Says hello at once.", inputSchema: z.object({ name: z.string() }) }, ({ name }) => ({
      content: [{ type: "text", text: `Hello, ${name}!` }],
    }));
    mcp.server.setRequestHandler("tasks/get", { params: TaskIdParams }, (params, ctx) => {
      const subject = ctx.http?.authInfo?.clientId;
      const record = subject === undefined ? undefined : tasks.get(params.taskId);
      if (!record || record.ownerHash !== ownerHash(subject!)) {
        errors++;
        throw new ProtocolError(-32602, "Task not found (unknown, expired, or not yours)");
      }
      return detailedTask(record);
    });
    return mcp;
  };
  const handler = createMcpHandler(factory, { legacy: "reject", responseMode: "json", onerror: () => errors++ });
  const node = toNodeHandler(handler);

  const server = createServer((req, res) => {
    const auth = req.headers.authorization;
    if (typeof auth !== "string" || !auth.startsWith("Bearer ") || auth.length === 7) {
      errors++;
      res
        .writeHead(401, { "Content-Type": "application/json" })
        .end('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Unauthenticated"}}');
      return;
    }
    const token = auth.slice(7);
    (req as typeof req & { auth: unknown }).auth = { token, clientId: token, scopes: [] };
    void node(req as Parameters<typeof node>[0], res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    info: { url: `http://127.0.0.1:${port}/mcp`, port, tasksExtension: TASKS_EXTENSION },
    handlers: {
      seed: (args) => {
        const { count, subject } = args as { count: number; subject: string };
        const ids: string[] = [];
        for (let i = 0; i < count; i++) {
          const record = workingTask(subject, "v2peer");
          tasks.set(record.taskId, record);
          ids.push(record.taskId);
        }
        return ids;
      },
      stats: () => ({ tasks: tasks.size, errors }),
    },
    close: async () => {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
});
