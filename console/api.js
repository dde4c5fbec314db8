// The console's one way to reach taskgate: JSON requests to the task inventory API with the
// session's bearer token in the Authorization header (never a cookie: no CSRF), and server-sent
// event streams read with fetch (EventSource cannot send that header) and parsed by
// eventsource-parser. Paths are relative to the page (/console), so a proxy prefix is kept.
// Over the caller's request quota taskgate answers 429 with Retry-After: every request and stream
// of this Api then waits that long (one shared pause, so nothing hammers), says so through
// onLimited, and tries again.

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
   * @param {number | undefined} [retryAfterSeconds]
   */
  constructor(status, code, message, field, retryAfterSeconds = undefined) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
    /** Of a 429: how long taskgate asked to wait. */
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Every request gives up after this long, and says so. */
const REQUEST_LIMIT_MS = 20_000;
/** A request refused for the rate limit is tried again for at most this long in all, then the refusal is shown. */
const RATE_LIMIT_WAIT_MS = 120_000;
/** The longest single pause a Retry-After may ask for (a bad header must not stop the console for hours). */
const RETRY_AFTER_MAX_S = 60;

/** Seconds a 429 asks to wait: Retry-After (seconds or an HTTP date), else 1; within 1..RETRY_AFTER_MAX_S. @param {Response} response */
function retryAfterOf(response) {
  const header = response.headers.get("Retry-After") ?? "";
  const seconds = /^\d+$/.test(header.trim()) ? Number(header.trim()) : (Date.parse(header) - Date.now()) / 1000;
  return Number.isFinite(seconds) ? Math.min(RETRY_AFTER_MAX_S, Math.max(1, Math.ceil(seconds))) : 1;
}

export class Api {
  /**
   * @param {string} token
   * @param {(retryInSeconds: number | undefined) => void} [onLimited] told of a rate-limit pause (undefined: it is over)
   */
  constructor(token, onLimited = () => {}) {
    this.token = token;
    this.onLimited = onLimited;
    /** Until when (ms since epoch) taskgate asked this console to wait. */
    this.limitedUntil = 0;
  }

  /** Waits out a rate-limit pause asked for by any earlier answer. */
  async pause() {
    for (let wait = this.limitedUntil - Date.now(); wait > 0; wait = this.limitedUntil - Date.now()) {
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  /** A 429 was answered: every request waits `seconds` from now. @param {number} seconds */
  limited(seconds) {
    this.limitedUntil = Math.max(this.limitedUntil, Date.now() + seconds * 1000);
    this.onLimited(seconds);
  }

  /** An answer came after the pause: it is over. */
  unlimited() {
    if (this.limitedUntil === 0 || this.limitedUntil > Date.now()) return;
    this.limitedUntil = 0;
    this.onLimited(undefined);
  }

  /**
   * The request, tried again after each 429's Retry-After for up to RATE_LIMIT_WAIT_MS.
   * @param {string} method
   * @param {string} path  relative to the page, e.g. "tasks?status=working"
   * @param {unknown} [body]
   * @returns {Promise<any>}
   */
  async request(method, path, body) {
    const started = Date.now();
    for (;;) {
      await this.pause();
      try {
        const json = await this.once(method, path, body);
        this.unlimited();
        return json;
      } catch (error) {
        const retryAfter = error instanceof ApiError ? error.retryAfterSeconds : undefined;
        if (retryAfter === undefined || Date.now() + retryAfter * 1000 - started > RATE_LIMIT_WAIT_MS) throw error;
        this.limited(retryAfter);
      }
    }
  }

  /**
   * One try of a request.
   * @param {string} method @param {string} path @param {unknown} [body]
   * @returns {Promise<any>}
   */
  async once(method, path, body) {
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
        response.status === 429 ? retryAfterOf(response) : undefined,
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
        if (error instanceof ApiError && error.retryAfterSeconds !== undefined) {
          // Over the rate limit: wait as asked (with every other request of this console), then open again.
          this.limited(error.retryAfterSeconds);
          onState("reconnecting", error.message);
          await this.pause();
          continue;
        }
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
    await this.pause();
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
        response.status === 429 ? retryAfterOf(response) : undefined,
      );
    }
    this.unlimited();
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
