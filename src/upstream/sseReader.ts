// Reads one SSE body as it arrives (eventsource-parser does the parsing) and hands each event to
// `onEvent`; resolves when the body ends, rejects when it breaks. `lastEventId` and `retryMs` say
// how the stream could be resumed (2025-11-25 servers may end a stream early and expect a GET
// with Last-Event-ID).

import { createParser, type EventSourceMessage } from "eventsource-parser";

export interface SseProgress {
  lastEventId?: string;
  retryMs?: number;
}

/** Feeds `body` to the parser until it ends (a reader that wants less aborts the body's request). */
export async function readSse(
  body: AsyncIterable<Buffer | Uint8Array | string>,
  onEvent: (event: EventSourceMessage) => void,
  progress: SseProgress = {},
): Promise<SseProgress> {
  const parser = createParser({
    onEvent(event) {
      if (event.id) progress.lastEventId = event.id;
      onEvent(event);
    },
    onRetry(ms) {
      progress.retryMs = ms;
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }));
  }
  return progress;
}
