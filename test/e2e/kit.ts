// The e2e test kit: starts the real example legacy server and a real taskgate in front of it on
// free loopback ports, and speaks 2026-07-28 to it over real HTTP (plain fetch, SSE read with
// eventsource-parser). Every test file builds on this; nothing here is a mock.

import type { EventEmitter } from "node:events";
import { createParser } from "eventsource-parser";
import type { Logger } from "pino";
import { type LegacyServer, startLegacyServer } from "../../examples/legacy-server/server.js";
import { type ConfigInput, ConfigSchema } from "../../src/config/schema.js";
import { type Gateway, startGateway } from "../../src/gateway.js";
import { createLogger } from "../../src/observability/logger.js";
import { type JsonObject, PROTOCOL_VERSION, TASKS_EXTENSION } from "../../src/protocol/wire.js";

export interface Stack {
  legacy: LegacyServer;
  gateway: Gateway;
  url: string;
  close(): Promise<void>;
}

type StackOverrides = Omit<Partial<ConfigInput>, "upstream"> & { upstream?: Omit<NonNullable<ConfigInput["upstream"]>, "url" | "command"> };

export async function startStack(options: { speed?: number; config?: StackOverrides; log?: Logger } = {}): Promise<Stack> {
  const legacy = await startLegacyServer({ port: 0, speed: options.speed ?? 20 });
  const config = ConfigSchema.parse({
    port: 0,
    auth: { mode: "demo" },
    // Tests close stacks with calls in flight: end them at once rather than after a grace period.
    shutdown: { graceMs: 0 },
    ...options.config,
    upstream: { ...options.config?.upstream, url: legacy.url },
  });
  const gateway = await startGateway(config, { log: options.log ?? createLogger(process.env.TEST_LOG_LEVEL ?? "silent") });
  return {
    legacy,
    gateway,
    url: gateway.url,
    async close() {
      await gateway.close();
      await legacy.close();
    },
  };
}

export const TASKS_CAPS = { extensions: { [TASKS_EXTENSION]: {} } };

export interface RpcOptions {
  token?: string | null;
  capabilities?: JsonObject;
  meta?: JsonObject;
  headers?: Record<string, string | undefined>;
  id?: string | number;
  signal?: AbortSignal;
}

let nextId = 1;

/** Standard headers for a modern request, derived from the body like a conforming client. */
export function modernHeaders(method: string, params: JsonObject, token: string | null = "alice"): Record<string, string> {
  const name = params.name ?? params.uri ?? params.taskId;
  return {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": PROTOCOL_VERSION,
    "Mcp-Method": method,
    ...(typeof name === "string" ? { "Mcp-Name": name } : {}),
    ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
  };
}

export function modernBody(method: string, params: JsonObject, options: RpcOptions = {}): JsonObject {
  return {
    jsonrpc: "2.0",
    id: options.id ?? nextId++,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? {},
        ...options.meta,
      },
    },
  };
}

export interface RpcReply {
  status: number;
  headers: Headers;
  contentType: string;
  /** The final JSON-RPC response (JSON body, or the last response event of an SSE stream). */
  message: JsonObject;
  /** Every message of an SSE response, in order (empty for JSON). */
  events: JsonObject[];
}

/** POSTs one modern request and reads the whole reply (JSON or SSE). */
export async function rpc(url: string, method: string, params: JsonObject = {}, options: RpcOptions = {}): Promise<RpcReply> {
  const headers: Record<string, string> = { ...modernHeaders(method, params, options.token === undefined ? "alice" : options.token) };
  for (const [k, v] of Object.entries(options.headers ?? {})) {
    if (v === undefined) delete headers[k];
    else headers[k] = v;
  }
  const response = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify(modernBody(method, params, options)),
    ...(options.signal ? { signal: options.signal } : {}),
  }).catch((error: unknown) => {
    if (error instanceof Error && error.name === "AbortError") throw error;
    // undici says only "fetch failed"; the cause (ECONNRESET, other side closed…) is what helps.
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
    throw new Error(`${method} to ${url} failed${cause}`, { cause: error });
  });
  return readReply(response);
}

export async function readReply(response: Response): Promise<RpcReply> {
  const contentType = response.headers.get("content-type") ?? "";
  const events: JsonObject[] = [];
  let message: JsonObject = {};
  if (contentType.includes("text/event-stream")) {
    const parser = createParser({ onEvent: (e) => events.push(JSON.parse(e.data) as JsonObject) });
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    message = events.findLast((e) => "result" in e || "error" in e) ?? {};
  } else {
    const text = await response.text();
    message = text ? (JSON.parse(text) as JsonObject) : {};
  }
  return { status: response.status, headers: response.headers, contentType, message, events };
}

export const resultOf = (reply: RpcReply) => reply.message.result as JsonObject;
export const errorOf = (reply: RpcReply) => reply.message.error as { code: number; message: string; data?: JsonObject };

/** Polls tasks/get until `done(task)` or the deadline. */
export async function pollTask(
  url: string,
  taskId: string,
  done: (task: JsonObject) => boolean,
  options: { token?: string; timeoutMs?: number } = {},
): Promise<JsonObject> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    const reply = await rpc(url, "tasks/get", { taskId }, { capabilities: TASKS_CAPS, token: options.token ?? "alice" });
    const task = resultOf(reply);
    if (task && done(task)) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} did not reach the expected state; last: ${JSON.stringify(reply.message)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves with the next `name` event of `events` (e.g. the legacy server's) that `match`es; rejects after `ms`. */
export function nextEvent<T>(events: EventEmitter, name: string, match: (payload: T) => boolean = () => true, ms = 5000): Promise<T> {
  return new Promise((resolve, reject) => {
    const listener = (payload: T) => {
      if (!match(payload)) return;
      clearTimeout(timer);
      events.off(name, listener);
      resolve(payload);
    };
    const timer = setTimeout(() => {
      events.off(name, listener);
      reject(new Error(`timed out after ${ms} ms waiting for event '${name}'`));
    }, ms);
    events.on(name, listener);
  });
}

/** GET /healthz of the gateway whose MCP endpoint is `url`: what it holds right now. */
export async function health(
  url: string,
): Promise<{ status: string; heldTasks: number; heldCalls: number; listenStreams: number; upstreamSessions: number }> {
  const response = await fetch(new URL("/healthz", url));
  return (await response.json()) as Awaited<ReturnType<typeof health>>;
}
