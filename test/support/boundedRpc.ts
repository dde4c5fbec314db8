// Modern (2026-07-28) requests whose wait is bounded: a reply that does not come within the limit
// is a failed assertion naming the method and the limit, never a stuck test. Built on mcpClient.ts;
// adds a raw-body POST (bodies JSON.stringify cannot build) and a call whose SSE frames are
// watched as they arrive, with how the stream ended (clean end or cut connection).

import type { JsonObject } from "../../src/protocol/wire.js";
import { modernBody, modernHeaders, type RpcOptions, type RpcReply, readReply, rpc } from "./mcpClient.js";
import { readSse } from "./sse.js";

/** The timeout of AbortSignal.timeout(), possibly wrapped by mcpClient.rpc() as the cause of its error. */
function isTimeout(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = e.cause) if (e.name === "TimeoutError" || e.name === "AbortError") return true;
  return false;
}

function limitError(method: string, limitMs: number, error: unknown): Error {
  if (isTimeout(error)) return new Error(`${method}: no answer within ${limitMs} ms`);
  return error instanceof Error ? error : new Error(String(error));
}

/** rpc() that gives up after `limitMs` (the whole reply, SSE included). */
export async function rpcWithin(
  limitMs: number,
  url: string,
  method: string,
  params: JsonObject = {},
  options: RpcOptions = {},
): Promise<RpcReply> {
  try {
    return await rpc(url, method, params, { ...options, signal: AbortSignal.timeout(limitMs) });
  } catch (error) {
    throw limitError(method, limitMs, error);
  }
}

/** POSTs `body` as it is (e.g. JSON nested deeper than JSON.stringify can go) with the modern headers of `method`. */
export async function postRawWithin(
  limitMs: number,
  url: string,
  method: string,
  body: string,
  headerParams: JsonObject = {},
): Promise<RpcReply> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: modernHeaders(method, headerParams),
      body,
      signal: AbortSignal.timeout(limitMs),
    });
    return await readReply(response);
  } catch (error) {
    throw limitError(method, limitMs, error);
  }
}

export interface WatchedCall {
  status: number;
  contentType: string;
  /** JSON body (a non-SSE reply), else undefined. */
  json?: JsonObject;
  /** SSE messages so far, in order. */
  frames: JsonObject[];
  /** How the reply ended: "end" (the server finished it) or "cut: <cause>" (the connection broke). */
  ended: Promise<string>;
}

/** POSTs a modern request and returns as soon as the response headers are in; frames keep arriving. */
export async function watchCall(
  url: string,
  method: string,
  params: JsonObject,
  options: RpcOptions & { limitMs?: number } = {},
): Promise<WatchedCall> {
  const limitMs = options.limitMs ?? 20_000;
  const abort = AbortSignal.timeout(limitMs);
  const headers = modernHeaders(method, params, options.token === undefined ? "alice" : options.token);
  const rpcBody = JSON.stringify(modernBody(method, params, options));
  let response: Response;
  try {
    response = await fetch(url, { method: "POST", headers, body: rpcBody, signal: abort });
  } catch (error) {
    throw limitError(method, limitMs, error);
  }
  const contentType = response.headers.get("content-type") ?? "";
  const frames: JsonObject[] = [];
  if (!contentType.includes("text/event-stream")) {
    const text = await response.text();
    return {
      status: response.status,
      contentType,
      json: text ? (JSON.parse(text) as JsonObject) : {},
      frames,
      ended: Promise.resolve("end"),
    };
  }
  const ended = (async () => {
    try {
      await readSse(response, { onFrame: (frame) => frames.push(frame) });
      return "end";
    } catch (error) {
      if (abort.aborted) return `cut: no end within ${limitMs} ms`;
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
      return `cut: ${cause}`;
    }
  })();
  return { status: response.status, contentType, frames, ended };
}

/** The final JSON-RPC response among SSE frames (the last with result or error). */
export const finalFrame = (frames: JsonObject[]) => frames.findLast((f) => "result" in f || "error" in f);
