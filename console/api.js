// The console's one way to reach taskgate: JSON requests to the task inventory API with the
// session's bearer token in the Authorization header (never a cookie: no CSRF), and server-sent
// event streams read with fetch (EventSource cannot send that header) and parsed by
// eventsource-parser. Paths are relative to the page (/console), so a proxy prefix is kept.

import { createParser } from "./vendor/eventsource-parser.js";

/**
 * @typedef {{ method: string, params: Record<string, unknown> }} InputRequest
 * @typedef {{ taskId: string, status: string, statusMessage?: string, tool: string, backend?: string,
 *   createdAt: string, lastUpdatedAt: string, ttl?: number, pollInterval?: number,
 *   inputRequests?: Record<string, InputRequest>, owner?: string, holder?: string, ageMs?: number,
 *   inputRequiredForMs?: number, history?: { status: string, statusMessage?: string, at: string }[],
 *   resultType?: string }} TaskItem
 */

/** A refused request: the HTTP status, the reason word, and the field an answer failed on (422). */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   * @param {string | undefined} field
   */
  constructor(status, code, message, field) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
  }
}

/** Every request gives up after this long, and says so. */
const REQUEST_LIMIT_MS = 20_000;

export class Api {
  /** @param {string} token */
  constructor(token) {
    this.token = token;
  }

  /**
   * @param {string} method
   * @param {string} path  relative to the page, e.g. "tasks?status=working"
   * @param {unknown} [body]
   * @returns {Promise<any>}
   */
  async request(method, path, body) {
    /** @type {Record<string, string>} */
    const headers = { Authorization: `Bearer ${this.token}`, Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await fetch(path, {
        method,
        headers,
        credentials: "omit",
        cache: "no-store",
        signal: AbortSignal.timeout(REQUEST_LIMIT_MS),
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    } catch (error) {
      const timedOut = error instanceof DOMException && error.name === "TimeoutError";
      throw new ApiError(
        0,
        "unreachable",
        timedOut ? `taskgate did not answer within ${REQUEST_LIMIT_MS / 1000} s` : "taskgate cannot be reached",
        undefined,
      );
    }
    const text = await response.text();
    /** @type {any} */
    let json;
    try {
      json = text === "" ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (!response.ok) {
      const error = json?.error ?? {};
      const message = typeof error.message === "string" ? error.message : `HTTP ${response.status}`;
      throw new ApiError(
        response.status,
        String(error.code ?? response.status),
        message,
        typeof error.field === "string" ? error.field : json?.field,
      );
    }
    return json;
  }

  /** @param {string} path */
  get(path) {
    return this.request("GET", path);
  }

  /** @param {string} path @param {unknown} body */
  post(path, body = {}) {
    return this.request("POST", path, body);
  }

  /**
   * Follows an SSE stream of `task` events until `signal` aborts: reconnects after a dropped
   * connection (waiting longer each time, up to 15 s) and, unless `untilEnd`, after the server
   * ended it too; stops on a 4xx answer.
   * @param {string} path
   * @param {(task: TaskItem) => void} onTask
   * @param {AbortSignal} signal
   * @param {{ untilEnd?: boolean, onState?: (state: "live" | "reconnecting" | "ended", why?: string) => void }} [options]
   */
  async follow(path, onTask, signal, { untilEnd = false, onState = () => {} } = {}) {
    let delay = 1000;
    while (!signal.aborted) {
      let ended = false;
      try {
        ended = await this.stream(path, onTask, signal, () => {
          delay = 1000;
          onState("live");
        });
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof ApiError && error.status >= 400 && error.status < 500) {
          onState("ended", error.message);
          return;
        }
      }
      if (signal.aborted) return;
      if (ended && untilEnd) {
        onState("ended");
        return;
      }
      onState("reconnecting");
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 15_000);
    }
  }

  /**
   * One connection: resolves true when the server ended the stream (a terminal task), false when it dropped.
   * @param {string} path @param {(task: TaskItem) => void} onTask @param {AbortSignal} signal @param {() => void} onOpen
   * @returns {Promise<boolean>}
   */
  async stream(path, onTask, signal, onOpen) {
    const response = await fetch(path, {
      headers: { Authorization: `Bearer ${this.token}`, Accept: "text/event-stream" },
      credentials: "omit",
      cache: "no-store",
      signal,
    });
    if (!response.ok || response.body === null) {
      const json = await response.json().catch(() => undefined);
      throw new ApiError(
        response.status,
        String(json?.error?.code ?? response.status),
        json?.error?.message ?? `HTTP ${response.status}`,
        undefined,
      );
    }
    onOpen();
    const parser = createParser({
      onEvent(event) {
        if (event.event !== "task") return;
        try {
          onTask(JSON.parse(event.data));
        } catch {
          // A frame that is not a task: skipped, the next one carries the whole state again.
        }
      },
    });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return true;
      parser.feed(value);
    }
  }
}

export const TERMINAL = new Set(["completed", "failed", "cancelled"]);
