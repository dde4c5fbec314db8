// The one place a method's Reply becomes an HTTP response: a result or an error as one JSON body
// (the error's own HTTP status), a stream as SSE (one `data:` event per message, keep-alive
// comments, the back-pressure cut-off of SseWriter). Resolves once the response is finished or
// the client is gone; a client that goes away mid-stream triggers the stream's onClientGone.

import type { ServerResponse } from "node:http";
import { type Reply, resultMessage } from "../protocol/reply.js";
import type { RequestId } from "../protocol/wire.js";
import { sendError, sendJson } from "./jsonResponse.js";
import { SseWriter } from "./sseWriter.js";

export interface ReplyWriterOptions {
  /** Interval of the `:` keep-alive comments on SSE responses. */
  keepAliveMs: number;
}

export async function writeReply(res: ServerResponse, id: RequestId, reply: Reply, options: ReplyWriterOptions): Promise<void> {
  if (res.destroyed) {
    // The client left while the handler worked: nobody to write to.
    if (reply.kind === "stream") reply.onClientGone();
    return;
  }
  if (reply.kind === "result") return sendJson(res, 200, resultMessage(id, reply.result));
  if (reply.kind === "error") return sendError(res, id, reply.error);

  const closed = new Promise<void>((resolve) => res.once("close", resolve));
  let ended = false;
  void closed.then(() => {
    if (!ended) reply.onClientGone();
  });
  const sse = new SseWriter(res, options.keepAliveMs);
  const iterator = reply.messages[Symbol.asyncIterator]();
  // Stop pulling once the client is gone; the producer learns it through onClientGone.
  const gone = closed.then(() => ({ done: true, value: undefined }) as const);
  for (;;) {
    const next = await Promise.race([iterator.next(), gone]);
    if (next.done) break;
    sse.send(next.value);
  }
  ended = true;
  sse.end();
  await Promise.race([closed, new Promise<void>((resolve) => res.once("finish", resolve))]);
}
