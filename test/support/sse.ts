// The one SSE reader of the tests: eventsource-parser over a fetch Response body, each event's data
// parsed as one JSON-RPC frame and handed over as it arrives (comments too), so a test can wait on
// a frame instead of the whole stream. framesOfText() does the same for a body already read.

import { createParser } from "eventsource-parser";
import type { JsonObject } from "../../src/protocol/wire.js";

export interface SseHandlers {
  onFrame(frame: JsonObject): void;
  onComment?(comment: string): void;
}

/** Whether `response` is an event stream (else it is a JSON body). */
export const isEventStream = (response: Response): boolean => (response.headers.get("content-type") ?? "").includes("text/event-stream");

/** Reads `response`'s SSE body to its end; rejects when the connection breaks or the fetch is aborted. */
export async function readSse(response: Response, handlers: SseHandlers): Promise<void> {
  const parser = createParser({
    onEvent: (event) => handlers.onFrame(JSON.parse(event.data) as JsonObject),
    ...(handlers.onComment ? { onComment: handlers.onComment } : {}),
  });
  const decoder = new TextDecoder();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
}

/** The JSON frames of a complete SSE body. */
export function framesOfText(text: string): JsonObject[] {
  const frames: JsonObject[] = [];
  const parser = createParser({ onEvent: (event) => frames.push(JSON.parse(event.data) as JsonObject) });
  parser.feed(text.endsWith("\n\n") ? text : `${text}\n\n`);
  return frames;
}
