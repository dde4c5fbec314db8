// A fetch wrapper for one upstream session: for each POST made inside a CallContext, it reads
// the response's SSE events as they pass (without altering a byte) and records which context
// each server-to-client request id belongs to, before the SDK transport sees that event.

import { createParser } from "eventsource-parser";
import { callContextStorage, type CallContext } from "./callContext.js";

export type RequestOrigins = Map<string | number, CallContext>;

export function taggingFetch(origins: RequestOrigins): typeof fetch {
  return async (input, init) => {
    const context = callContextStorage.getStore();
    const response = await fetch(input, init);
    const contentType = response.headers.get("content-type") ?? "";
    if (!context || !response.body || !contentType.includes("text/event-stream")) return response;

    const parser = createParser({
      onEvent(event) {
        if (!event.data) return;
        try {
          const message = JSON.parse(event.data) as { id?: string | number; method?: string };
          if (message.method !== undefined && message.id !== undefined) origins.set(message.id, context);
        } catch {
          // Not JSON: the SDK transport reports it; nothing to tag.
        }
      },
    });
    const decoder = new TextDecoder();
    const tagged = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          parser.feed(decoder.decode(chunk, { stream: true }));
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(tagged, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
