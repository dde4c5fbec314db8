// A real subscriptions/listen client for the e2e tests: POSTs the listen request with fetch and
// reads the SSE response as it arrives (sse.ts), keeping every frame and `:` comment.
// waitFor() resolves on a matching frame; close() aborts the request like a client going away.

import { request as httpRequest } from "node:http";
import type { JsonObject } from "../../src/protocol/wire.js";
import { modernBody, modernHeaders } from "./mcpClient.js";
import { readSse } from "./sse.js";

export const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

export interface Listen {
  status: number;
  contentType: string;
  /** Set when the answer was plain JSON (an error) instead of a stream. */
  json?: JsonObject;
  frames: JsonObject[];
  comments: string[];
  /** Resolves when the server ended the stream (or the client aborted it). */
  ended: Promise<void>;
  isEnded(): boolean;
  /** The first frame (already received or still to come) that matches. */
  waitFor(match: (frame: JsonObject) => boolean, timeoutMs?: number, what?: string): Promise<JsonObject>;
  close(): void;
}

export interface ListenOptions {
  token?: string;
  capabilities?: JsonObject;
  id?: string | number;
}

export async function openListen(url: string, notifications: unknown, options: ListenOptions = {}): Promise<Listen> {
  const params = { notifications } as JsonObject;
  const abort = new AbortController();
  const response = await fetch(url, {
    method: "POST",
    headers: modernHeaders("subscriptions/listen", params, options.token ?? "alice"),
    body: JSON.stringify(
      modernBody("subscriptions/listen", params, {
        capabilities: options.capabilities ?? {},
        ...(options.id !== undefined ? { id: options.id } : {}),
      }),
    ),
    signal: abort.signal,
  }).catch((error: unknown) => {
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
    throw new Error(`subscriptions/listen to ${url} failed${cause}`, { cause: error });
  });
  const contentType = response.headers.get("content-type") ?? "";
  const frames: JsonObject[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  let ended = false;
  const base = { status: response.status, contentType, frames, comments, isEnded: () => ended, close: () => abort.abort() };

  if (!contentType.includes("text/event-stream")) {
    ended = true;
    const text = await response.text();
    return {
      ...base,
      json: text ? (JSON.parse(text) as JsonObject) : {},
      ended: Promise.resolve(),
      waitFor: () => Promise.reject(new Error("not a stream")),
    };
  }

  const onFrame = (frame: JsonObject) => {
    frames.push(frame);
    for (const waiter of [...waiters]) waiter();
  };
  const done = (async () => {
    try {
      await readSse(response, { onFrame, onComment: (comment) => comments.push(comment) });
    } catch {
      // aborted by close(), or the connection was cut
    }
    ended = true;
    for (const waiter of [...waiters]) waiter();
  })();

  const waitFor = (match: (frame: JsonObject) => boolean, timeoutMs = 10_000, what = "a matching frame") =>
    new Promise<JsonObject>((resolve, reject) => {
      const check = () => {
        const found = frames.find(match);
        if (found) {
          finish();
          resolve(found);
        } else if (ended) {
          finish();
          reject(new Error(`stream ended without ${what}; frames: ${JSON.stringify(frames)}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out waiting for ${what}; frames: ${JSON.stringify(frames)}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  return { ...base, ended: done, waitFor };
}

/** One POST on a brand-new TCP connection (agent: false), answered as JSON. */
export function postOnFreshConnection(
  url: string,
  method: string,
  params: JsonObject,
  options: ListenOptions = {},
): Promise<{ status: number; body: JsonObject }> {
  const body = JSON.stringify(modernBody(method, params, { capabilities: options.capabilities ?? {} }));
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: "POST", agent: false, headers: { ...modernHeaders(method, params, options.token ?? "alice"), Connection: "close" } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as JsonObject }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

export const paramsOf = (frame: JsonObject) => (frame.params ?? {}) as JsonObject;
export const subscriptionIdOf = (frame: JsonObject) =>
  frame.method === undefined
    ? ((frame.result as JsonObject | undefined)?._meta as JsonObject | undefined)?.[SUBSCRIPTION_ID]
    : (paramsOf(frame)._meta as JsonObject | undefined)?.[SUBSCRIPTION_ID];

/** Task statuses in frame order, consecutive repeats (progress updates) collapsed. */
export function statusTrail(frames: JsonObject[], taskId: string): string[] {
  const trail: string[] = [];
  for (const frame of frames) {
    if (frame.method !== "notifications/tasks" || paramsOf(frame).taskId !== taskId) continue;
    const status = paramsOf(frame).status as string;
    if (trail.at(-1) !== status) trail.push(status);
  }
  return trail;
}
