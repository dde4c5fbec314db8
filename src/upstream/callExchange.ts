// One call's POST on a connection of its own, read with undici's dispatch callbacks: the status
// line, then each body chunk straight into the JSON or SSE reader, then the end. Every call's
// answer passes here, and a body stream (undici's request()) costs a Readable, its listeners,
// ticks and promises per call; the messages are the same either way. The transport decides what
// the status line means (refused, accepted) and what the end means (clean, resumed, lost).

import type { Dispatcher } from "undici";
import { type SseProgress, sseFeed } from "./sseReader.js";

/** Bytes of a refused answer's body kept for its error message. */
const REFUSAL_TEXT_MAX = 4_096;

/** How one exchange's response went, told to the transport as it happens. */
export interface ExchangeEvents {
  /** The status line, its content type and how its body would be read: accepted (a 2xx JSON or SSE answer, or 202),
   *  or refused once `text`, the start of its body, is read. */
  head(status: number, type: string, body: BodyKind, headers: Record<string, string | string[] | undefined>): "accept" | "refuse";
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

export class CallExchange implements Dispatcher.DispatchHandler {
  private mode: Mode = "none";
  private type = "";
  private status = 0;
  private text = "";
  private chunks?: Buffer[];
  private feed?: (chunk: Buffer) => void;
  private readonly progress: SseProgress = {};
  private controller?: Dispatcher.DispatchController;

  constructor(private readonly events: ExchangeEvents) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    status: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (status < 200) return; // 1xx: the real status line follows
    const type = headers["content-type"];
    this.type = (Array.isArray(type) ? type[0] : type) ?? "";
    this.status = status;
    const body: BodyKind = status === 202 ? "dump" : this.type.includes("application/json") ? "json" : "sse";
    if (this.events.head(status, this.type, body, headers) === "refuse") {
      this.mode = "refusing";
      return;
    }
    this.mode = body;
    if (body === "json") this.chunks = [];
    else if (body === "sse") this.feed = sseFeed((event) => this.events.event(event.data), this.progress);
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.mode === "sse") {
      try {
        this.feed!(chunk);
      } catch (error) {
        this.controller?.abort(error instanceof Error ? error : new Error(String(error)));
      }
    } else if (this.mode === "json") this.chunks!.push(chunk);
    else if (this.mode === "refusing" && this.text.length < REFUSAL_TEXT_MAX) this.text += chunk.toString("utf8");
  }

  onResponseEnd(): void {
    const { mode } = this;
    this.mode = "none";
    if (mode === "refusing") return this.events.refused(this.status, this.type, this.text);
    if (mode === "json") this.events.message(Buffer.concat(this.chunks!).toString("utf8"));
    this.events.ended(undefined, this.progress);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    const { mode } = this;
    this.mode = "none";
    if (mode === "none") return this.events.failed(error);
    // A refused answer whose body broke is refused with what was read of it.
    if (mode === "refusing") return this.events.refused(this.status, this.type, this.text);
    this.events.ended(error, this.progress);
  }
}
