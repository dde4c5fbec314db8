// State shared by every session of one legacy server instance (counter, beta flag, live sessions),
// plus the per-session context tools receive. One SharedState per startLegacyServer() call, so
// several servers in one test process never see each other. Event payloads are documented here.

import type { EventEmitter } from "node:events";
import type { McpServer, RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

export interface SharedState {
  /** Delay divisor: speed 10 ⇒ every wait is ten times shorter. */
  readonly speed: number;
  readonly events: EventEmitter;
  /** Value of resource example://counter. */
  counter: number;
  /** Whether the `beta` tool is currently registered on every session. */
  betaEnabled: boolean;
  /** Live sessions by Mcp-Session-Id. */
  readonly sessions: Map<string, SessionContext>;
}

export interface SessionContext {
  readonly state: SharedState;
  readonly mcp: McpServer;
  readonly transport: StreamableHTTPServerTransport;
  /** Resource URIs this session subscribed to via resources/subscribe. */
  readonly subscriptions: Set<string>;
  /** The `beta` tool while registered on this session's server. */
  beta: RegisteredTool | undefined;
}

/** How a tool call ended, as reported by "tool-finished". */
export type ToolOutcome =
  | "ok" // normal result
  | "tool-error" // result with isError: true
  | "error" // body threw: a JSON-RPC error for broken_tool (McpServer turns other throws into isError)
  | "cancelled" // client sent notifications/cancelled; no response is sent
  | "closed"; // session closed (DELETE, expiry, shutdown) while running

export interface SessionEvent {
  sessionId: string;
  clientCapabilities: unknown;
}
export interface ToolStartedEvent {
  tool: string;
  sessionId: string | undefined;
  requestId: string | number;
}
export interface ToolFinishedEvent {
  tool: string;
  outcome: ToolOutcome;
  sessionId: string | undefined;
  requestId: string | number;
}
export interface CancelledEvent {
  tool: string;
  requestId: string | number;
  reason: string | undefined;
  sessionId: string | undefined;
}
export interface ElicitationAnsweredEvent {
  tool: string;
  action: string;
  content: unknown;
  sessionId: string | undefined;
  /** The tool call's JSON-RPC id on its session: with sessionId, which call the answer reached. */
  requestId: string | number;
}
export interface SamplingAnsweredEvent {
  tool: string;
  text: string;
  model: string;
  sessionId: string | undefined;
}
export interface RootsAnsweredEvent {
  tool: string;
  roots: string[];
  sessionId: string | undefined;
}

export function scaledDelay(state: SharedState, ms: number): number {
  return Math.max(0, Math.round(ms / state.speed));
}
