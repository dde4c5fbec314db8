// Talking to the task inventory over real HTTP: JSON calls with a bearer token, and its SSE event
// streams read with the tests' one SSE reader (each `event: task` frame handed over as it arrives).

import type { JsonObject } from "../../src/protocol/wire.js";
import { readSse } from "./sse.js";

export interface ApiReply {
  status: number;
  body: JsonObject;
  headers: Headers;
}

/** The gateway's base URL (without the MCP path). */
export const baseOf = (mcpUrl: string) => new URL(mcpUrl).origin;

export async function api(base: string, method: string, path: string, token: string | null, body?: unknown): Promise<ApiReply> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token !== null ? { Authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { "Content-Type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text === "" ? {} : (JSON.parse(text) as JsonObject), headers: response.headers };
}

export interface EventStream {
  status: number;
  /** The next `task` frame (waits up to `ms`). */
  next(ms?: number): Promise<JsonObject>;
  /** Resolves once the server ended the stream. */
  ended: Promise<void>;
  close(): void;
}

export async function openEvents(base: string, path: string, token: string): Promise<EventStream> {
  const abort = new AbortController();
  const response = await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${token}` }, signal: abort.signal });
  const frames: JsonObject[] = [];
  const waiting: Array<(frame: JsonObject) => void> = [];
  const take = (frame: JsonObject) => {
    const taker = waiting.shift();
    if (taker) taker(frame);
    else frames.push(frame);
  };
  const ended = (async () => {
    if (!response.body || response.status !== 200) return;
    try {
      await readSse(response, { onFrame: take });
    } catch {
      // closed by us
    }
  })();
  return {
    status: response.status,
    next(ms = 10_000) {
      const ready = frames.shift();
      if (ready) return Promise.resolve(ready);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no task event within ${ms} ms`)), ms);
        waiting.push((frame) => {
          clearTimeout(timer);
          resolve(frame);
        });
      });
    },
    ended,
    close: () => abort.abort(),
  };
}

/** Frames until one matches (the ones before it are returned too). */
export async function nextMatching(stream: EventStream, match: (frame: JsonObject) => boolean, ms = 10_000): Promise<JsonObject[]> {
  const seen: JsonObject[] = [];
  for (;;) {
    const frame = await stream.next(ms);
    seen.push(frame);
    if (match(frame)) return seen;
  }
}
