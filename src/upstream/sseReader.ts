// Reads one SSE body as it arrives (eventsource-parser does the parsing) and hands each event to
// `onEvent`; resolves when the body ends, rejects when it breaks (or closes before its end).
// sseFeed is the same parsing for a body whose reader hands over its chunks (callExchange.ts).
// `lastEventId` and `retryMs` say how the stream could be resumed (2025-11-25 servers may end a
// stream early and expect a GET with Last-Event-ID). The body is read with its events, not with an
// async iterator: every call's answer passes here, and an iterator costs a generator and promises
// per chunk.

import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { createParser } from "eventsource-parser";

export interface SseProgress {
  lastEventId?: string;
  retryMs?: number;
}

/** What onEvent gets: the event's data (and id, when it has one). */
export interface SseEvent {
  data: string;
  id?: string | undefined;
}

/** A feeder of one SSE body's chunks: each complete event goes to `onEvent` (it throws when the parser does). */
export function sseFeed(onEvent: (event: SseEvent) => void, progress: SseProgress = {}): (chunk: Buffer | string) => void {
  const parser = createParser({
    onEvent(event) {
      if (event.id) progress.lastEventId = event.id;
      onEvent(event);
    },
    onRetry(ms) {
      progress.retryMs = ms;
    },
  });
  // StringDecoder keeps a character split across chunks, as TextDecoder's stream mode does, for less per chunk.
  const decoder = new StringDecoder("utf8");
  return (chunk) => parser.feed(typeof chunk === "string" ? chunk : decoder.write(chunk));
}

/** Feeds `body` to the parser until it ends (a reader that wants less aborts the body's request). */
export function readSse(body: Readable, onEvent: (event: SseEvent) => void, progress: SseProgress = {}): Promise<SseProgress> {
  const feed = sseFeed(onEvent, progress);
  return new Promise<SseProgress>((resolve, reject) => {
    let settled = false;
    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      body.off("data", onData);
      if (error === undefined) resolve(progress);
      else reject(error);
    };
    const onData = (chunk: Buffer | string) => {
      try {
        feed(chunk);
      } catch (error) {
        settle(error);
        body.destroy();
      }
    };
    body.on("data", onData);
    body.once("end", () => settle());
    body.once("error", settle);
    // The error is made only for a stream that really closed early (an Error's stack costs more than the whole read).
    body.once("close", () => settled || settle(new Error("the stream closed before its end")));
  });
}
