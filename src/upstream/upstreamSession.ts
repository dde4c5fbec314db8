// One legacy MCP client session towards the upstream (official SDK 1.x client over Streamable
// HTTP), opened with one capability profile and shared by every call of that profile.
// Server-to-client requests are routed to the CallContext of the call that caused them;
// requests it cannot route get a JSON-RPC error upstream, never a guess.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode as SdkErrorCode,
  ListRootsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Logger } from "pino";
import type { InputRequest, JsonObject } from "../protocol/wire.js";
import type { LegacyClientCapabilities } from "./capabilityProfile.js";
import { taggingFetch, type RequestOrigins } from "./taggingFetch.js";

export interface UpstreamInfo {
  protocolVersion: string;
  capabilities: JsonObject;
  serverInfo: JsonObject;
  instructions?: string;
}

export interface RequestOptions {
  signal?: AbortSignal;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

export type NotificationListener = (notification: { method: string; params?: JsonObject }) => void;

const AnyResult = z.looseObject({});
/** setTimeout's ceiling: long upstream calls must never time out on our side. */
const NO_TIMEOUT_MS = 2_147_483_647;

export class UpstreamSession {
  private constructor(
    private readonly client: Client,
    private readonly transport: StreamableHTTPClientTransport,
    readonly info: UpstreamInfo,
  ) {}

  static async open(options: {
    url: string;
    profile: LegacyClientCapabilities;
    clientInfo: { name: string; version: string };
    log: Logger;
    onNotification?: NotificationListener;
    onClose?: () => void;
  }): Promise<UpstreamSession> {
    const origins: RequestOrigins = new Map();
    const transport = new StreamableHTTPClientTransport(new URL(options.url), { fetch: taggingFetch(origins) });
    const client = new Client(options.clientInfo, { capabilities: options.profile });

    const route = async (request: InputRequest, requestId: string | number, signal: AbortSignal) => {
      const context = origins.get(requestId);
      origins.delete(requestId);
      if (!context) {
        throw new McpError(SdkErrorCode.InvalidRequest, "taskgate has no client waiting on the call this request belongs to");
      }
      return context.onInput(request, signal);
    };
    if (options.profile.elicitation) {
      client.setRequestHandler(ElicitRequestSchema, (req, extra) =>
        route({ method: "elicitation/create", params: req.params as JsonObject }, extra.requestId, extra.signal) as never,
      );
    }
    if (options.profile.sampling) {
      client.setRequestHandler(CreateMessageRequestSchema, (req, extra) =>
        route({ method: "sampling/createMessage", params: req.params as JsonObject }, extra.requestId, extra.signal) as never,
      );
    }
    if (options.profile.roots) {
      client.setRequestHandler(ListRootsRequestSchema, (req, extra) =>
        route({ method: "roots/list", params: (req.params ?? {}) as JsonObject }, extra.requestId, extra.signal) as never,
      );
    }
    client.fallbackNotificationHandler = async (notification) => {
      options.onNotification?.(notification as { method: string; params?: JsonObject });
    };

    await client.connect(transport);
    client.onclose = () => options.onClose?.();
    const capabilities = (client.getServerCapabilities() ?? {}) as JsonObject;
    const serverInfo = (client.getServerVersion() ?? { name: "unknown", version: "0" }) as JsonObject;
    const instructions = client.getInstructions();
    const info: UpstreamInfo = {
      protocolVersion: transport.protocolVersion ?? "unknown",
      capabilities,
      serverInfo,
      ...(instructions ? { instructions } : {}),
    };
    return new UpstreamSession(client, transport, info);
  }

  get sessionId(): string | undefined {
    return this.transport.sessionId;
  }

  async request(method: string, params: JsonObject, options: RequestOptions = {}): Promise<JsonObject> {
    return (await this.client.request({ method, params }, AnyResult, {
      timeout: NO_TIMEOUT_MS,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onprogress ? { onprogress: options.onprogress } : {}),
    })) as JsonObject;
  }

  async close(): Promise<void> {
    try {
      await this.transport.terminateSession();
    } catch {
      // The upstream may not allow DELETE (405) or be gone already; closing locally is enough.
    }
    await this.client.close();
  }
}
