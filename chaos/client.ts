// The simulated users' HTTP client (undici's request(), the lean style of bench/lib/modernClient):
// one 2026-07-28 request on a connection of its own (Connection: close, so the balancer sends
// each request to the next instance), the answer read as JSON or as SSE up to its response event,
// bounded by a client-side limit. Transport failures and the limit come back as values, not
// exceptions: the history records every answer, including "none".
// "Of its own" takes an undici Client per request, destroyed after it: a pool (the global
// dispatcher) opens a spare connection when a running request is aborted (a listen stream the user
// replaces) and hands it to a later request up to 4 s on. The balancer decides a connection's
// faults when it accepts it, so that later request met a cut that had ended before it was sent.

import { createParser } from "eventsource-parser";
import { Client, request } from "undici";
import { modernHeaders } from "../bench/lib/leanClient.js";
import { META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, PROTOCOL_VERSION, TASKS_EXTENSION } from "../bench/lib/taskShape.js";

export type Json = Record<string, unknown>;
export const TASKS_CAPS: Json = { extensions: { [TASKS_EXTENSION]: {} }, elicitation: {} };

export type Reply =
  | { outcome: "ok"; httpStatus: number; result: Json }
  | { outcome: "error"; httpStatus: number; error: { code: number; message: string; reason?: string } }
  | { outcome: "transport" | "timeout"; failure: string };

let nextId = 1;

export function requestParts(
  method: string,
  params: Json,
  token: string,
  capabilities: Json,
): { headers: Record<string, string>; body: string } {
  const name = typeof params.name === "string" ? params.name : typeof params.taskId === "string" ? params.taskId : undefined;
  return {
    headers: modernHeaders(method, name, token),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: nextId++,
      method,
      params: { ...params, _meta: { [META_PROTOCOL_VERSION]: PROTOCOL_VERSION, [META_CLIENT_CAPABILITIES]: capabilities } },
    }),
  };
}

/** One request; never throws. `limitMs`: the client gives up (outcome "timeout") after this long. */
export async function call(url: string, method: string, params: Json, token: string, capabilities: Json, limitMs: number): Promise<Reply> {
  const signal = AbortSignal.timeout(limitMs);
  const dispatcher = ownConnection(url);
  try {
    const parts = requestParts(method, params, token, capabilities);
    const response = await request(url, { method: "POST", ...parts, reset: true, signal, dispatcher });
    const contentType = String(response.headers["content-type"] ?? "");
    const text = await response.body.text();
    const message = contentType.includes("text/event-stream") ? lastResponse(text) : text ? (JSON.parse(text) as Json) : undefined;
    if (message && typeof message.result === "object" && message.result !== null) {
      return { outcome: "ok", httpStatus: response.statusCode, result: message.result as Json };
    }
    const error = message?.error as { code?: number; message?: string; data?: { reason?: string } } | undefined;
    if (error && typeof error.code === "number") {
      const reason = error.data?.reason;
      return {
        outcome: "error",
        httpStatus: response.statusCode,
        error: { code: error.code, message: String(error.message ?? ""), ...(typeof reason === "string" ? { reason } : {}) },
      };
    }
    return { outcome: "transport", failure: `HTTP ${response.statusCode} ${contentType} without a JSON-RPC answer: ${text.slice(0, 200)}` };
  } catch (error) {
    if (signal.aborted) return { outcome: "timeout", failure: `no answer within ${limitMs} ms` };
    return { outcome: "transport", failure: describe(error) };
  } finally {
    dispatcher.destroy().catch(() => undefined);
  }
}

/** A dispatcher holding one request's connection and nothing else (see the head of this file). */
function ownConnection(url: string): Client {
  return new Client(new URL(url).origin);
}

export function describe(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error; e !== undefined && parts.length < 3; e = (e as { cause?: unknown }).cause) {
    parts.push(
      e instanceof Error ? `${e.message}${(e as { code?: string }).code ? ` (${(e as { code?: string }).code})` : ""}` : String(e),
    );
  }
  // undici names the connection a socket error came on: the balancer's story of it (its client port) is the evidence.
  const socket = (error as { socket?: { localPort?: number; bytesRead?: number; bytesWritten?: number } } | undefined)?.socket;
  if (socket?.localPort !== undefined)
    parts.push(`[connection :${socket.localPort}, ${socket.bytesWritten} B sent, ${socket.bytesRead} B read]`);
  return parts.join(" ← ");
}

function lastResponse(body: string): Json | undefined {
  let found: Json | undefined;
  const parser = createParser({
    onEvent(event) {
      try {
        const message = JSON.parse(event.data) as Json;
        if ("result" in message || "error" in message) found = message;
      } catch {
        // a truncated event (a cut connection): no answer
      }
    },
  });
  parser.feed(body);
  return found;
}

export interface ListenStream {
  /** Resolves once the stream ended (server, fault, or close()). */
  ended: Promise<string>;
  close(): void;
}

/** Opens subscriptions/listen for `taskIds` and hands every notifications/tasks frame to `onTask`. */
export function listen(url: string, taskIds: string[], token: string, onTask: (params: Json) => void): ListenStream {
  const abort = new AbortController();
  const ended = (async () => {
    const dispatcher = ownConnection(url);
    try {
      const parts = requestParts("subscriptions/listen", { notifications: { taskIds } }, token, TASKS_CAPS);
      const response = await request(url, { method: "POST", ...parts, reset: true, signal: abort.signal, dispatcher });
      const parser = createParser({
        onEvent(event) {
          try {
            const frame = JSON.parse(event.data) as Json;
            if (frame.method === "notifications/tasks" && typeof frame.params === "object") onTask(frame.params as Json);
          } catch {
            // a truncated frame
          }
        },
      });
      const decoder = new TextDecoder();
      for await (const chunk of response.body) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
      return "ended by the server";
    } catch (error) {
      return abort.signal.aborted ? "closed by the user" : describe(error);
    } finally {
      dispatcher.destroy().catch(() => undefined);
    }
  })();
  return { ended, close: () => abort.abort() };
}
