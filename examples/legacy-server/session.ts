// openSession(state): one McpServer + one stateful StreamableHTTPServerTransport (SSE responses,
// random UUID session id). The session joins state.sessions when the transport assigns its id,
// emits "session-opened" on notifications/initialized and "session-closed" when its transport
// closes (DELETE, expiry, shutdown), leaving state.sessions (and calling onClosed) at that moment.
// `resumable` gives the transport an in-memory event store (event ids, Last-Event-ID replay).

import { randomUUID } from "node:crypto";
import { InMemoryEventStore } from "@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { registerResources } from "./resources.js";
import type { SessionContext, SharedState } from "./state.js";
import { registerTools } from "./tools.js";

export const SERVER_INFO = { name: "example-legacy-server", version: "1.0.0" };
export const INSTRUCTIONS = "An example legacy MCP server for taskgate demos.";

function createServer(): McpServer {
  return new McpServer(SERVER_INFO, {
    instructions: INSTRUCTIONS,
    capabilities: {
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { listChanged: true, subscribe: true },
      completions: {},
      logging: {},
    },
  });
}

export async function openSession(
  state: SharedState,
  onClosed?: (session: SessionContext) => void,
  options: { resumable?: boolean } = {},
): Promise<SessionContext> {
  let sessionId: string | undefined;
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    ...(options.resumable ? { eventStore: new InMemoryEventStore() } : {}),
    onsessioninitialized: (id) => {
      sessionId = id;
      state.sessions.set(id, context);
    },
  });
  const context: SessionContext = { state, mcp: createServer(), transport, subscriptions: new Set(), beta: undefined };
  registerTools(context);
  registerResources(context);

  const server = context.mcp.server;
  server.oninitialized = () => {
    if (sessionId) state.events.emit("session-opened", { sessionId, clientCapabilities: server.getClientCapabilities() });
  };
  server.onclose = () => {
    onClosed?.(context);
    if (!sessionId) return;
    if (state.sessions.get(sessionId) === context) state.sessions.delete(sessionId);
    state.events.emit("session-closed", { sessionId, clientCapabilities: server.getClientCapabilities() });
  };

  await context.mcp.connect(transport);
  return context;
}
