// One legacy MCP client session towards the upstream (official SDK 1.x client over Streamable
// HTTP), opened with one capability profile and shared by every call of that profile.
// Server-to-client requests are routed to the CallContext of the call that caused them;
// requests it cannot route get a JSON-RPC error upstream, never a guess. Notifications unrelated
// to a call (list_changed, resources/updated) arrive on the standalone GET stream, which the SDK
// opens after initialize; open() waits for it, so nothing sent after open() resolves is lost.

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
  /** Whether the standalone GET stream is open (false: 405, failed or too slow); without it no
   *  list_changed or resources/updated can reach taskgate. */
  notificationStream: boolean;
}

export interface RequestOptions {
  signal?: AbortSignal;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

export type NotificationListener = (notification: { method: string; params?: JsonObject }) => void;

const AnyResult = z.looseObject({});

/** A legacy server-to-client request in its 2026-07-28 input-request shape: no _meta, and URL
 * elicitations without elicitationId (2026 has none; its completion notification is dropped). */
function inputRequest(method: InputRequest["method"], params: JsonObject | undefined): InputRequest {
  const { _meta: _legacyMeta, elicitationId: _id, ...rest } = params ?? {};
  return { method, params: rest };
}
/** setTimeout's ceiling: long upstream calls must never time out on our side. */
const NO_TIMEOUT_MS = 2_147_483_647;
/** How long open() waits for the upstream to answer the standalone GET. */
const STANDALONE_STREAM_WAIT_MS = 3_000;

/** Wraps fetch to report how the first standalone GET went: headers of a 200 SSE response
 *  arrive only once the upstream routes its unrelated messages to that stream. (The SDK sends
 *  that GET only when notifications/initialized got 202; any other answer means no stream.) */
function watchStandaloneStream(inner: typeof fetch, report: (open: boolean) => void): typeof fetch {
  return async (input, init) => {
    if ((init?.method ?? "GET").toUpperCase() !== "GET") {
      const response = await inner(input, init);
      if (typeof init?.body === "string" && init.body.includes('"notifications/initialized"') && response.status !== 202) report(false);
      return response;
    }
    try {
      const response = await inner(input, init);
      report(response.ok && (response.headers.get("content-type") ?? "").includes("text/event-stream"));
      return response;
    } catch (error) {
      report(false);
      throw error;
    }
  };
}

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
    let reportStream: (open: boolean) => void = () => undefined;
    const standalone = new Promise<boolean>((resolve) => {
      reportStream = resolve;
      setTimeout(() => resolve(false), STANDALONE_STREAM_WAIT_MS).unref();
    });
    const transport = new StreamableHTTPClientTransport(new URL(options.url), {
      fetch: watchStandaloneStream(taggingFetch(origins), (open) => reportStream(open)),
    });
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
        route(inputRequest("elicitation/create", req.params as JsonObject), extra.requestId, extra.signal) as never,
      );
    }
    if (options.profile.sampling) {
      client.setRequestHandler(CreateMessageRequestSchema, (req, extra) =>
        route(inputRequest("sampling/createMessage", req.params as JsonObject), extra.requestId, extra.signal) as never,
      );
    }
    if (options.profile.roots) {
      client.setRequestHandler(ListRootsRequestSchema, (req, extra) =>
        route(inputRequest("roots/list", req.params as JsonObject | undefined), extra.requestId, extra.signal) as never,
      );
    }
    client.fallbackNotificationHandler = async (notification) => {
      options.onNotification?.(notification as { method: string; params?: JsonObject });
    };

    await client.connect(transport);
    client.onclose = () => options.onClose?.();
    // The SDK sends the GET right after notifications/initialized was accepted (202).
    const notificationStream = await standalone;
    if (!notificationStream) {
      options.log.warn({ event: "upstream.notifications.unavailable" }, "upstream offers no standalone GET stream: list changes and resource updates cannot be relayed");
    }
    const capabilities = (client.getServerCapabilities() ?? {}) as JsonObject;
    const serverInfo = (client.getServerVersion() ?? { name: "unknown", version: "0" }) as JsonObject;
    const instructions = client.getInstructions();
    const info: UpstreamInfo = {
      protocolVersion: transport.protocolVersion ?? "unknown",
      capabilities,
      serverInfo,
      notificationStream,
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
