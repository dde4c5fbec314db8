// A fetch wrapper for one upstream session. For each POST made inside a CallContext it reads the
// response's SSE events as they pass (without altering a byte) and
// - records which context each server-to-client request id belongs to, before the SDK transport
//   sees that event;
// - notices a stream that ends or breaks without the call's response and without event ids (so
//   the SDK cannot resume it): the call would otherwise wait forever, since taskgate sets no
//   client-side timeout on long calls.

import { createParser } from "eventsource-parser";
import { callContextStorage, type CallContext } from "./callContext.js";

export type RequestOrigins = Map<string | number, CallContext>;

/** A response may legally arrive on another stream; give it a moment before calling the call lost. */
const LOST_GRACE_MS = 1000;

function requestIdOf(body: unknown): string | number | undefined {
  if (typeof body !== "string") return undefined;
  try {
    const message = JSON.parse(body) as { id?: string | number; method?: string };
    return message.method !== undefined ? message.id : undefined;
  } catch {
    return undefined;
  }
}

export function taggingFetch(origins: RequestOrigins): typeof fetch {
  return async (input, init) => {
    const context = callContextStorage.getStore();
    const response = await fetch(input, init);
    const contentType = response.headers.get("content-type") ?? "";
    // Only a call's own POST: GET streams (standalone or resumed) belong to no call.
    if (!context || init?.method !== "POST" || !response.body || !contentType.includes("text/event-stream")) return response;

    const requestId = requestIdOf(init?.body);
    let answered = false;
    let resumable = false;
    const parser = createParser({
      onEvent(event) {
        if (event.id) resumable = true;
        if (!event.data) return;
        try {
          const message = JSON.parse(event.data) as { id?: string | number; method?: string };
          if (message.method !== undefined && message.id !== undefined) origins.set(message.id, context);
          else if (message.id !== undefined && message.id === requestId) answered = true;
        } catch {
          // Not JSON: the SDK transport reports it; nothing to tag.
        }
      },
    });
    const ended = (why: string) => {
      if (requestId === undefined || answered || resumable) return;
      setTimeout(() => context.onStreamLost(why), LOST_GRACE_MS).unref();
    };
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    const tagged = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            ended("the upstream ended the call's stream without a result");
            controller.close();
            return;
          }
          parser.feed(decoder.decode(value, { stream: true }));
          controller.enqueue(value);
        } catch (error) {
          ended(`the call's stream from the upstream broke: ${error instanceof Error ? error.message : String(error)}`);
          controller.error(error);
        }
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    });
    return new Response(tagged, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
