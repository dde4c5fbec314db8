// A FAKE 2025-11-25 server whose upstream tasks misbehave in ways no real server does on demand
// (named as such in the tests that use it). Streamable HTTP with plain JSON answers, no standalone
// stream (GET 405); it declares tasks.requests.tools.call and lists task-only tools:
//   stuck_result:   the task is "completed" at once, but tasks/result never answers;
//   forgotten_task: tasks/get answers -32602 "task not found", tasks/result never answers;
//   ended_on_cancel: runs until cancelled, and tasks/cancel answers -32602 (it had just ended);
//   refused_cancel: runs until cancelled, and tasks/cancel answers -32603;
//   runs_directly:  answers the task-augmented tools/call with a plain result (no task);
//   optional_echo:  taskSupport "optional", and well behaved: called with params.task it makes a
//                   task that is done at once ("via task"), without it answers plainly ("plain").
//   blip:           runs until cancelled (used with outage(): new connections refused for a while).
// `received` lists the methods it got, in order; close() ends every connection it holds.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface MisbehavingTaskServer {
  url: string;
  received: string[];
  /** Refuses new connections for `ms` (requests still hanging keep theirs), then listens again. */
  outage(ms: number): Promise<void>;
  close(): Promise<void>;
}

type Message = { jsonrpc: "2.0"; id?: string | number; method?: string; params?: Record<string, unknown> };

const TOOLS = ["stuck_result", "forgotten_task", "ended_on_cancel", "refused_cancel", "runs_directly", "optional_echo", "blip"];
const DONE_AT_ONCE = new Set(["stuck_result", "optional_echo"]);
const text = (words: string) => ({ content: [{ type: "text", text: words }] });

async function bodyOf(request: IncomingMessage): Promise<Message> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8")) as Message;
}

export async function startMisbehavingTaskServer(): Promise<MisbehavingTaskServer> {
  const received: string[] = [];
  const taskTool = new Map<string, string>();
  let next = 0;
  const sockets = new Set<Socket>();

  const task = (taskId: string, status: string) => ({
    taskId,
    status,
    createdAt: new Date().toISOString(),
    lastUpdatedAt: new Date().toISOString(),
    ttl: 60_000,
    pollInterval: 100,
  });

  /** The answer to `message`, or undefined to leave the request hanging. */
  const answer = (message: Message): { result?: unknown; error?: { code: number; message: string } } | undefined => {
    const params = message.params ?? {};
    const taskId = String(params.taskId ?? "");
    const tool = taskTool.get(taskId);
    switch (message.method) {
      case "initialize":
        return {
          result: {
            protocolVersion: "2025-11-25",
            capabilities: { tools: {}, tasks: { cancel: {}, requests: { tools: { call: {} } } } },
            serverInfo: { name: "misbehaving-task-server (fake)", version: "0" },
          },
        };
      case "ping":
        return { result: {} };
      case "tools/list":
        return {
          result: {
            tools: TOOLS.map((name) => ({
              name,
              inputSchema: { type: "object" },
              execution: { taskSupport: name === "optional_echo" ? "optional" : "required" },
            })),
          },
        };
      case "tools/call": {
        const name = String(params.name);
        if (name === "runs_directly") return { result: text("ran directly") };
        if (name === "optional_echo" && !params.task) return { result: text("plain") };
        const id = `task-${++next}`;
        taskTool.set(id, name);
        return { result: { task: task(id, DONE_AT_ONCE.has(name) ? "completed" : "working") } };
      }
      case "tasks/get":
        if (tool === "forgotten_task" || !tool) return { error: { code: -32602, message: `Task not found: ${taskId}` } };
        return { result: task(taskId, DONE_AT_ONCE.has(tool) ? "completed" : "working") };
      case "tasks/result":
        return tool === "optional_echo"
          ? { result: { ...text("via task"), _meta: { "io.modelcontextprotocol/related-task": { taskId } } } }
          : undefined;
      case "tasks/cancel":
        if (tool === "refused_cancel") return { error: { code: -32603, message: "the task store is down" } };
        return { error: { code: -32602, message: `Cannot cancel task in terminal status: completed` } };
      default:
        return { error: { code: -32601, message: `Method not found: ${message.method}` } };
    }
  };

  const handle = (request: IncomingMessage, response: ServerResponse) => {
    if (request.method === "DELETE") return void response.writeHead(200).end();
    if (request.method !== "POST") return void response.writeHead(405).end();
    bodyOf(request).then(
      (message) => {
        if (message.method) received.push(message.method);
        if (message.id === undefined || message.method === undefined) return void response.writeHead(202).end();
        const reply = answer(message);
        if (!reply) return; // hangs until the client gives up
        response.writeHead(200, { "content-type": "application/json", "mcp-session-id": "fake-session" });
        response.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, ...reply }));
      },
      () => response.writeHead(400).end(),
    );
  };
  const listen = async (port: number) => {
    const server = createServer(handle);
    server.on("connection", (socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    return server;
  };
  let server = await listen(0);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    received,
    outage: async (ms: number) => {
      // close() refuses new connections and ends idle ones; requests still hanging keep theirs.
      server.close();
      await new Promise((resolve) => setTimeout(resolve, ms));
      server = await listen(port);
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
