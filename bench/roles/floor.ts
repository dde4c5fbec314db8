// Role "floor": the least a tasks/get server can do, on bare node:http — the floor taskgate's
// tasks/get is measured against. Per request it does the real work and nothing else: reads the
// body, parses the JSON once, checks what taskgate's front door checks (loopback Host, POST,
// bearer token, JSON-RPC shape, _meta protocol version and capabilities, MCP-Protocol-Version /
// Mcp-Method / Mcp-Name headers against the body, the tasks extension declared), sha256 of the
// owner, a Map lookup with the owner compared, and JSON-serialises the DetailedTask. Errors get a
// JSON-RPC error (never expected during the bench; counted in "stats").
// "seed" {count, subject} stores `count` working tasks and returns their ids.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  detailedTask,
  META_CLIENT_CAPABILITIES,
  META_PROTOCOL_VERSION,
  ownerHash,
  PROTOCOL_VERSION,
  type StoredTask,
  TASKS_EXTENSION,
  workingTask,
} from "../lib/taskShape.js";
import { serveRole } from "./serveRole.js";

const BODY_LIMIT = 1_048_576;
const LOOPBACK_HOST = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])(:\d{1,5})?$/i;

await serveRole("floor", async () => {
  const tasks = new Map<string, StoredTask>();
  let errors = 0;

  const fail = (res: ServerResponse, status: number, id: unknown, code: number, message: string) => {
    errors++;
    const body = JSON.stringify({ jsonrpc: "2.0", id: id ?? null, error: { code, message } });
    res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) }).end(body);
  };

  const answer = (req: IncomingMessage, res: ServerResponse, text: string) => {
    let message: { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: Record<string, unknown> };
    try {
      message = JSON.parse(text);
    } catch {
      return fail(res, 400, null, -32700, "Parse error");
    }
    const { id, method, params } = message;
    if (message.jsonrpc !== "2.0" || typeof method !== "string" || (typeof id !== "string" && typeof id !== "number")) {
      return fail(res, 400, id, -32600, "Invalid request");
    }
    const meta = params?._meta as Record<string, unknown> | undefined;
    const version = meta?.[META_PROTOCOL_VERSION];
    const capabilities = meta?.[META_CLIENT_CAPABILITIES] as { extensions?: Record<string, unknown> } | undefined;
    if (typeof version !== "string" || typeof capabilities !== "object" || capabilities === null) {
      return fail(res, 400, id, -32602, "Missing _meta");
    }
    const headers = req.headers;
    if (headers["mcp-protocol-version"] !== version || version !== PROTOCOL_VERSION) return fail(res, 400, id, -32001, "Header mismatch");
    if (headers["mcp-method"] !== method) return fail(res, 400, id, -32001, "Header mismatch");
    if (method !== "tasks/get") return fail(res, 404, id, -32601, "Method not found");
    if (!capabilities.extensions?.[TASKS_EXTENSION]) return fail(res, 400, id, -32021, "Missing required client capability");
    const taskId = params?.taskId;
    if (typeof taskId !== "string" || taskId === "") return fail(res, 200, id, -32602, "params.taskId");
    const name = headers["mcp-name"];
    if (name !== undefined && name !== taskId) return fail(res, 400, id, -32001, "Header mismatch");
    const auth = headers.authorization;
    if (typeof auth !== "string" || !auth.startsWith("Bearer ") || auth.length === 7) return fail(res, 401, id, -32600, "Unauthenticated");
    const owner = ownerHash(auth.slice(7));
    const record = tasks.get(taskId);
    if (!record || record.ownerHash !== owner) return fail(res, 200, id, -32602, "Task not found");
    const body = JSON.stringify({ jsonrpc: "2.0", id, result: detailedTask(record) });
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) }).end(body);
  };

  const server = createServer((req, res) => {
    if (!LOOPBACK_HOST.test(req.headers.host ?? "") || req.headers.origin !== undefined) return fail(res, 403, null, -32600, "Forbidden");
    if (req.method !== "POST") return fail(res, 405, null, -32600, "POST only");
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT) req.destroy();
      else chunks.push(chunk);
    });
    req.on("end", () => answer(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    info: { url: `http://127.0.0.1:${port}/mcp`, port },
    handlers: {
      seed: (args) => {
        const { count, subject } = args as { count: number; subject: string };
        const ids: string[] = [];
        for (let i = 0; i < count; i++) {
          const record = workingTask(subject, "floor");
          tasks.set(record.taskId, record);
          ids.push(record.taskId);
        }
        return ids;
      },
      stats: () => ({ tasks: tasks.size, errors }),
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
});
