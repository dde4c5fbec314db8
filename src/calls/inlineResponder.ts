// Serves a running upstream call inline on the client's own HTTP request: JSON when the result
// comes quickly, otherwise an SSE stream carrying the request's progress and then the result.
// A client that goes away cancels the upstream call. A question from the upstream ends the call
// with an error here (MRTR rounds are not offered on inline calls yet).

import type { IncomingMessage, ServerResponse } from "node:http";
import { ErrorCode, RpcError } from "../protocol/errors.js";
import type { RequestId } from "../protocol/wire.js";
import { errorMessage, resultMessage } from "../http/rpcResponse.js";
import { SseWriter } from "../http/sseWriter.js";
import { STREAMED, type HandlerResult } from "../methods/context.js";
import type { UpstreamCall } from "./upstreamCall.js";
import { modernResult } from "./upstreamResult.js";

export interface InlineOptions {
  id: RequestId;
  progressToken?: string | number;
  req: IncomingMessage;
  res: ServerResponse;
  /** How long a result may take and still be answered as plain JSON. */
  jsonWindowMs: number;
  note: Record<string, unknown>;
}

export async function respondInline(call: UpstreamCall, options: InlineOptions): Promise<HandlerResult> {
  const { id, progressToken, res } = options;
  let sse: SseWriter | undefined;
  const pending: unknown[] = [];
  const openStream = () => {
    if (sse || res.headersSent) return;
    sse = new SseWriter(res);
    for (const message of pending.splice(0)) sse.send(message);
  };
  const emit = (message: unknown) => (sse ? sse.send(message) : pending.push(message));

  const stopWatching = call.watch({
    progress: (p) => {
      if (progressToken === undefined) return;
      emit({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken, ...p } });
      openStream();
    },
    question: (q) => {
      q.refuse({ code: ErrorCode.InternalError, message: "the client cannot answer questions on an inline call" });
      const what = String((q.request.params as { message?: string }).message ?? q.request.method);
      options.note.outcome = "question_refused";
      call.abort(`upstream asked '${what}' during an inline call`);
      finishWith(
        errorMessage(
          id,
          new RpcError(
            ErrorCode.InternalError,
            `The upstream tool asked the client a question (${q.request.method}: "${what}") during an inline call, ` +
              "which taskgate cannot relay yet; the upstream call was cancelled. Declare the " +
              "io.modelcontextprotocol/tasks extension to run this tool as a task and answer it with tasks/update.",
          ),
        ),
      );
    },
  });

  let done = false;
  let resolveDone: (r: HandlerResult) => void = () => undefined;
  const finished = new Promise<HandlerResult>((r) => (resolveDone = r));
  function finishWith(message: unknown): void {
    if (done) return;
    done = true;
    stopWatching();
    clearTimeout(timer);
    if (sse) {
      sse.send(message);
      sse.end();
    } else if (!res.headersSent) {
      const text = JSON.stringify(message);
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
      res.end(text);
    }
    resolveDone(STREAMED);
  }

  const timer = setTimeout(openStream, options.jsonWindowMs);
  res.on("close", () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    stopWatching();
    sse?.end();
    options.note.outcome = "client_disconnected";
    call.abort("client closed the stream");
    resolveDone(STREAMED);
  });

  void call.outcome.then((outcome) => {
    if (outcome.kind === "result") {
      options.note.outcome = outcome.result.isError === true ? "tool_error" : "result";
      finishWith(resultMessage(id, modernResult(outcome.result)));
    } else if (outcome.kind === "error") {
      options.note.outcome = "error";
      finishWith(errorMessage(id, outcome.error));
    } else {
      finishWith(errorMessage(id, { code: ErrorCode.InternalError, message: `Upstream call stopped: ${outcome.reason}` }));
    }
  });
  return finished;
}

