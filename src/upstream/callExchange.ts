// One call's POST on a connection of its own, read with undici's dispatch callbacks: the status
// line, then each body chunk straight into the JSON or SSE reader, then the end. Every call's
// answer passes here, and a body stream (undici's request()) costs a Readable, its listeners,
// ticks and promises per call; the messages are the same either way. The transport decides what
// the status line means (refused, accepted) and what the end means (clean, resumed, lost).
// It implements undici's handler hooks on raw headers (onConnect … onError), as undici's own
// request() does: a handler of the newer hooks (onRequestStart …) is wrapped per request in one
// that parses every response header into an object, and only two are read here. The types mark
// those hooks deprecated; undici 7 runs on them (see decisions/0036).

import type { Dispatcher } from "undici";
import { type SseProgress, sseFeed } from "./sseReader.js";

/** Bytes of a refused answer's body kept for its error message. */
const REFUSAL_TEXT_MAX = 4_096;

/** How one exchange's response went, told to the transport as it happens. */
export interface ExchangeEvents {
  /** The status line, its content type and how its body would be read (and the session id it issued, if any):
   *  accepted (a 2xx JSON or SSE answer, or 202), or refused once `text`, the start of its body, is read. */
  head(status: number, type: string, body: BodyKind, sessionId: string | undefined): "accept" | "refuse";
  refused(status: number, type: string, text: string): void;
  /** No status line came: the connection failed or was closed. */
  failed(error: Error): void;
  /** One message of the body (a JSON body may be a batch: one call each). */
  message(text: string): void;
  /** An SSE event's data. */
  event(data: string): void;
  /** The body ended (`error` when it broke); `progress` says how an SSE stream could be resumed. */
  ended(error: Error | undefined, progress: SseProgress): void;
}

/** How an accepted body is read: dropped (202: the answer comes on the standalone stream), one JSON text, or SSE events. */
export type BodyKind = "dump" | "json" | "sse";

type Mode = "none" | "refusing" | BodyKind;

/** The value of the first header named `name` (lower case) among undici's raw headers (name, value, …), as text. */
function rawHeader(raw: Buffer[], name: string): string | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const sent = raw[i]!;
    if (sent.length === name.length && sent.toString("latin1").toLowerCase() === name) return raw[i + 1]!.toString("latin1");
  }
  return undefined;
}

export class CallExchange implements Dispatcher.DispatchHandler {
  private mode: Mode = "none";
  private type = "";
  private status = 0;
  private text = "";
  private chunks?: Buffer[];
  private feed?: (chunk: Buffer) => void;
  private readonly progress: SseProgress = {};
  private abort?: (error?: Error) => void;

  constructor(private readonly events: ExchangeEvents) {}

  onConnect(abort: (error?: Error) => void): void {
    this.abort = abort;
  }

  onHeaders(status: number, raw: Buffer[], _resume: () => void, _statusText: string): boolean {
    if (status < 200) return true; // 1xx: the real status line follows
    this.type = rawHeader(raw, "content-type") ?? "";
    this.status = status;
    const body: BodyKind = status === 202 ? "dump" : this.type.includes("application/json") ? "json" : "sse";
    if (this.events.head(status, this.type, body, rawHeader(raw, "mcp-session-id")) === "refuse") {
      this.mode = "refusing";
      return true;
    }
    this.mode = body;
    if (body === "json") this.chunks = [];
    else if (body === "sse") this.feed = sseFeed((event) => this.events.event(event.data), this.progress);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.mode === "sse") {
      try {
        this.feed!(chunk);
      } catch (error) {
        this.abort?.(error instanceof Error ? error : new Error(String(error)));
      }
    } else if (this.mode === "json") this.chunks!.push(chunk);
    else if (this.mode === "refusing" && this.text.length < REFUSAL_TEXT_MAX) this.text += chunk.toString("utf8");
    return true;
  }

  onComplete(): void {
    const { mode } = this;
    this.mode = "none";
    if (mode === "refusing") return this.events.refused(this.status, this.type, this.text);
    if (mode === "json") this.events.message(Buffer.concat(this.chunks!).toString("utf8"));
    this.events.ended(undefined, this.progress);
  }

  onError(error: Error): void {
    const { mode } = this;
    this.mode = "none";
    if (mode === "none") return this.events.failed(error);
    // A refused answer whose body broke is refused with what was read of it.
    if (mode === "refusing") return this.events.refused(this.status, this.type, this.text);
    this.events.ended(error, this.progress);
  }
}
