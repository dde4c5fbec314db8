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

/** A result or an error is written at once (nothing to wait for); a stream resolves once it ended. */
export function writeReply(res: ServerResponse, id: RequestId, reply: Reply, options: ReplyWriterOptions): Promise<void> | undefined {
  if (res.destroyed) {
    // The client left while the handler worked: nobody to write to.
    if (reply.kind === "stream") reply.onClientGone();
    return undefined;
  }
  if (reply.kind === "result") sendJson(res, 200, resultMessage(id, reply.result));
  else if (reply.kind === "error") sendError(res, id, reply.error);
  else return writeStream(res, reply, options);
  return undefined;
}

async function writeStream(res: ServerResponse, reply: Extract<Reply, { kind: "stream" }>, options: ReplyWriterOptions): Promise<void> {
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
