// Wire names and shapes of MCP 2026-07-28 and the Tasks extension that the front door speaks.

import type { JsonObject } from "../util/json.js";

export type { JsonObject };

export const PROTOCOL_VERSION = "2026-07-28";
export const SUPPORTED_VERSIONS = [PROTOCOL_VERSION] as const;
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

export const META = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  logLevel: "io.modelcontextprotocol/logLevel",
  serverInfo: "io.modelcontextprotocol/serverInfo",
  subscriptionId: "io.modelcontextprotocol/subscriptionId",
  relatedTask: "io.modelcontextprotocol/related-task",
} as const;

export type RequestId = string | number;

export interface JsonRpcRequest {
  jsonrpc: "2.0";
  id: RequestId;
  method: string;
  params: JsonObject & { _meta: JsonObject };
}

export interface ClientCapabilities {
  experimental?: JsonObject;
  roots?: JsonObject;
  sampling?: { context?: JsonObject; tools?: JsonObject };
  elicitation?: { form?: JsonObject; url?: JsonObject };
  extensions?: { [id: string]: JsonObject };
}

export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";
export const TERMINAL_STATUSES: ReadonlySet<TaskStatus> = new Set(["completed", "failed", "cancelled"]);

/** One server-to-client question, as carried in `inputRequests` (no jsonrpc/id). */
export interface InputRequest {
  method: "elicitation/create" | "sampling/createMessage" | "roots/list";
  params: JsonObject;
}
export type InputRequests = Record<string, InputRequest>;

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** Methods of 2026-07-28 (+ tasks) that the front door serves. */
export const MODERN_METHODS = new Set([
  "server/discover",
  "tools/list",
  "tools/call",
  "prompts/list",
  "prompts/get",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "completion/complete",
  "subscriptions/listen",
  "tasks/get",
  "tasks/update",
  "tasks/cancel",
]);

/** Methods whose `Mcp-Name` header mirrors a param. */
export const NAME_PARAM: Record<string, string> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId",
};

export function declaresTasks(caps: ClientCapabilities | undefined): boolean {
  const ext = caps?.extensions?.[TASKS_EXTENSION];
  return typeof ext === "object" && ext !== null;
}
