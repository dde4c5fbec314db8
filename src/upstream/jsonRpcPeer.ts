// JsonRpcPeer: JSON-RPC 2.0 over one UpstreamTransport, from the client side. It numbers our
// requests, matches responses, routes progress by token, answers the upstream's requests through
// a handler, and withdraws an upstream request the upstream cancels. A request is started with a
// ResponseSink (start/stop: callbacks, one object per request, the common call's short path) or
// as a promise (request: the same, wrapped, with a signal that stops it). A request ends exactly once:
// with its result, the upstream's JSON-RPC error, its time limit, its caller's abort (then
// notifications/cancelled goes upstream, but never for initialize or a ping, and the exchange is
// closed), or the session's end. Every listener and timer a request takes is released when it ends.
// A notifications/cancelled that cannot be sent (the upstream refuses or does not answer the POST)
// is sent again, up to `cancelAttempts` times with a doubling pause from `cancelRetryMs`; each
// outcome is told to the handler (the session ends itself when a cancel stays undelivered; a cancel
// the session's end overtook is reported undelivered too, so none goes uncounted). `lastHeardAt`
// is when the upstream last sent anything (the session's liveness reads it).

import type { Logger } from "pino";
import { endUpstreamSpan, startUpstreamSpan } from "../observability/upstreamSpan.js";
import { ErrorCode } from "../protocol/errors.js";
import type { JsonObject, RequestId } from "../protocol/wire.js";
import { SESSION_ENDED } from "../questions/question.js";
import { isObject } from "../util/json.js";
import { EXCHANGE_CLOSED, Exchange, type JsonRpcMessage, type UpstreamTransport, type Via } from "./transport.js";
import { CallStopped, UpstreamFailure, UpstreamRpcError } from "./upstreamFailure.js";

export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

export interface PeerHandlers {
  /** Answers an upstream request; a rejection with UpstreamRpcError becomes that JSON-RPC error. */
  request(message: JsonRpcMessage & { id: RequestId; method: string }, via: Via, withdrawn: AbortSignal): Promise<JsonObject>;
  notification(message: JsonRpcMessage & { method: string }, via: Via): void;
  /** The transport says the session is gone; the handler ends the requests in flight (failAll). */
  closed(failure: UpstreamFailure): void;
  /** How a notifications/cancelled for a `method` request fared: delivered, retried (an attempt failed, another
   *  follows), undelivered (given up). */
  cancel?(outcome: CancelOutcome, requestId: RequestId, method: string, why?: string): void;
  /** Request `requestId` ended, whichever way (before its sink hears of it). */
  ended?(requestId: RequestId): void;
}

export type CancelOutcome = "delivered" | "retried" | "undelivered";

/** How hard a notifications/cancelled is pushed (upstream.cancelAttempts, upstream.cancelRetryMs). */
export interface CancelDelivery {
  attempts: number;
  retryMs: number;
}

const DEFAULT_CANCEL_DELIVERY: CancelDelivery = { attempts: 1, retryMs: 0 };

/** Requests never cancelled: initialize may not be (the protocol says so), and a ping does no work to
 *  stop; its cancel would only add a POST to an upstream already slow, and, undelivered, end a session. */
const UNCANCELLED = new Set(["initialize", "ping"]);

export interface RequestOptions {
  /** Our own id for the request (default: the next number). */
  id?: number;
  /** Aborting stops the request: notifications/cancelled upstream, exchange closed, CallStopped. */
  signal?: AbortSignal;
  onprogress?: (progress: Progress) => void;
  /** No answer within `ms` ⇒ cancelled upstream and rejected with upstream_timeout naming `option`. */
  timeout?: { ms: number; option: string };
  /** A call that may run long (see UpstreamTransport.sendRequest). */
  long?: boolean;
}

/** Where one request's end (and its progress) goes: the callback form of a request, for the common call's short path. */
export interface ResponseSink {
  result(result: JsonObject): void;
  /** The upstream's JSON-RPC error (UpstreamRpcError), a failure on the way (UpstreamFailure), or a stop (CallStopped). */
  failed(error: Error): void;
  /** Progress with this request's token: present ⇒ the request carries a progressToken (its id). */
  progress?(progress: Progress): void;
}

export type StartOptions = Pick<RequestOptions, "id" | "timeout" | "long">;

/** One request in flight: its exchange, where its end goes, and its timers. One object per request. */
class Outstanding extends Exchange {
  timer?: NodeJS.Timeout | undefined;
  lostTimer?: NodeJS.Timeout | undefined;

  constructor(
    private readonly peer: JsonRpcPeer,
    readonly id: RequestId,
    readonly method: string,
    readonly sink: ResponseSink,
  ) {
    super();
  }

  fail(error: Error): void {
    this.peer.settle(this.id, error);
  }
}

const ONCE = { once: true } as const;

/** A response may legally arrive on another stream; give it a moment before calling the request lost. */
const LOST_GRACE_MS = 1_000;

export class JsonRpcPeer {
  private lastId = 0;
  private readonly pending = new Map<RequestId, Outstanding>();
  private readonly incoming = new Map<RequestId, AbortController>();
  private failure?: UpstreamFailure;
  /** performance.now() of the last message from the upstream (0: none yet). */
  lastHeardAt = 0;

  constructor(
    private readonly transport: UpstreamTransport,
    private readonly handlers: PeerHandlers,
    private readonly log: Logger,
    private readonly cancelDelivery: CancelDelivery = DEFAULT_CANCEL_DELIVERY,
  ) {
    transport.receiver = {
      message: (message, via) => this.receive(message, via),
      exchangeLost: (requestId, why) => this.exchangeLost(requestId, why),
      closed: (failure) => handlers.closed(failure),
    };
  }

  mintId(): number {
    return ++this.lastId;
  }

  /** Requests in flight. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Sends a request; with tracing on, in a client span whose context goes in the request's `_meta`. */
  request(method: string, params: JsonObject, options: RequestOptions = {}): Promise<JsonObject> {
    if (this.failure) return Promise.reject(this.failure);
    const id = options.id ?? this.mintId();
    const traced = startUpstreamSpan(method, id, params, this.transport);
    if (!traced) return this.exchange(method, params, id, options);
    return endUpstreamSpan(traced.span, this.exchange(method, traced.params, id, options));
  }

  /**
   * Sends a request whose end goes to `sink` (exactly once, never before start() returned); returns its id. Throws
   * the session's failure when it ended. Untraced: the short path is taken only while tracing is off. Stop it with stop().
   */
  start(method: string, params: JsonObject, sink: ResponseSink, options: StartOptions = {}): RequestId {
    if (this.failure) throw this.failure;
    const id = options.id ?? this.mintId();
    const entry = new Outstanding(this, id, method, sink);
    this.pending.set(id, entry);
    const { timeout } = options;
    if (timeout) {
      entry.timer = setTimeout(() => {
        const why = `Upstream timed out: no answer to ${method} within ${timeout.ms} ms (${timeout.option})`;
        this.stop(id, new UpstreamFailure("upstream_timeout", why));
      }, timeout.ms);
    }
    const withToken = sink.progress ? { ...params, _meta: { ...(isObject(params._meta) ? params._meta : {}), progressToken: id } } : params;
    this.transport.sendRequest({ jsonrpc: "2.0", id, method, params: withToken }, entry, options.long);
    return id;
  }

  /** Stops request `id` with `error`: the upstream is told (notifications/cancelled) and its exchange closed. */
  stop(id: RequestId, error: Error): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.settle(id, error);
    if (!UNCANCELLED.has(entry.method)) void this.deliverCancel(id, entry.method, error.message);
  }

  /** The promise form: a sink that settles it, and the caller's signal that stops it. */
  private exchange(method: string, params: JsonObject, id: number, options: RequestOptions): Promise<JsonObject> {
    const { signal, onprogress } = options;
    if (signal?.aborted) return Promise.reject(new CallStopped(String(signal.reason ?? "aborted")));
    return new Promise<JsonObject>((resolve, reject) => {
      const onAbort = () => this.stop(id, new CallStopped(String(signal?.reason ?? "aborted")));
      const sink: ResponseSink = {
        result: (result) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(result);
        },
        failed: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      if (onprogress) sink.progress = onprogress;
      signal?.addEventListener("abort", onAbort, ONCE);
      this.start(method, params, sink, options.id === id ? options : { ...options, id });
    });
  }

  /** Sends a notification; failures are logged, never thrown (notifications have no answer). */
  notify(method: string, params: JsonObject): Promise<void> {
    return this.transport.send({ jsonrpc: "2.0", method, params }).catch((error: unknown) => {
      this.log.warn(
        { event: "upstream.notify.failed", method, err: error instanceof Error ? error.message : String(error) },
        "upstream notification failed",
      );
    });
  }

  /** Ends every request in flight with `inFlight` (default `failure`); later requests fail with `failure` at once. */
  failAll(failure: UpstreamFailure, inFlight: UpstreamFailure = failure): void {
    this.failure ??= failure;
    for (const id of [...this.pending.keys()]) this.settle(id, inFlight);
    for (const controller of this.incoming.values()) controller.abort(SESSION_ENDED);
    this.incoming.clear();
  }

  /** notifications/cancelled for `id`, sent again after failures within cancelDelivery; every outcome told to the handler. */
  private async deliverCancel(id: RequestId, method: string, reason: string): Promise<void> {
    const { attempts, retryMs } = this.cancelDelivery;
    let why = "";
    for (let attempt = 1; attempt <= attempts; attempt++) {
      // The session ended first: its end closed every exchange and sends the upstream a DELETE, which
      // may not get through either; the cancel is reported undelivered, never dropped unseen.
      if (this.failure) return this.undelivered(id, method, attempt - 1, `the session ended first (${this.failure.message})`);
      try {
        await this.transport.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason } });
        this.handlers.cancel?.("delivered", id, method);
        return;
      } catch (error) {
        why = error instanceof Error ? error.message : String(error);
      }
      if (attempt < attempts) {
        this.handlers.cancel?.("retried", id, method, why);
        await new Promise((resolve) => setTimeout(resolve, retryMs * 2 ** (attempt - 1)));
      }
    }
    this.undelivered(id, method, attempts, this.failure ? `the session ended first (${this.failure.message})` : why);
  }

  private undelivered(id: RequestId, method: string, attempts: number, why: string): void {
    this.log.warn(
      { event: "upstream.cancel.undelivered", requestId: id, method, attempts, err: why },
      "notifications/cancelled could not be delivered upstream",
    );
    this.handlers.cancel?.("undelivered", id, method, why);
  }

  /** Ends request `id` with `error` (nothing when it ended already): its timers released, its exchange closed. */
  settle(id: RequestId, error: Error): void {
    const entry = this.release(id);
    if (!entry) return;
    entry.close();
    entry.sink.failed(error);
  }

  /** Forgets request `id` (its timers too); the entry, if it was still in flight. */
  private release(id: RequestId): Outstanding | undefined {
    const entry = this.pending.get(id);
    if (!entry) return undefined;
    this.pending.delete(id);
    clearTimeout(entry.timer);
    clearTimeout(entry.lostTimer);
    this.handlers.ended?.(id);
    return entry;
  }

  private exchangeLost(id: RequestId, why: string): void {
    const entry = this.pending.get(id);
    if (!entry || entry.lostTimer) return;
    entry.lostTimer = setTimeout(() => this.settle(id, new UpstreamFailure("upstream_lost", `Upstream call lost: ${why}`)), LOST_GRACE_MS);
  }

  private receive(message: JsonRpcMessage, via: Via): void {
    this.lastHeardAt = performance.now();
    if (message.method === undefined) return this.onResponse(message);
    if (message.id !== undefined && message.id !== null)
      return void this.onRequest(message as JsonRpcMessage & { id: RequestId; method: string }, via);
    const notification = message as JsonRpcMessage & { method: string };
    if (notification.method === "notifications/progress") return this.onProgress(notification.params);
    if (notification.method === "notifications/cancelled") {
      const requestId = notification.params?.requestId as RequestId | undefined;
      if (requestId !== undefined) this.incoming.get(requestId)?.abort(EXCHANGE_CLOSED);
      return;
    }
    this.handlers.notification(notification, via);
  }

  private onResponse(message: JsonRpcMessage): void {
    if (message.id === undefined) return;
    // Late (cancelled or timed out): ignored. The exchange is over: its connection is kept (not closed).
    const entry = this.release(message.id);
    if (!entry) return;
    if (message.error) entry.sink.failed(new UpstreamRpcError(message.error));
    else entry.sink.result(isObject(message.result) ? message.result : {});
  }

  private onProgress(params: JsonObject | undefined): void {
    const sink = params ? this.pending.get(params.progressToken as RequestId)?.sink : undefined;
    if (!sink?.progress || typeof params?.progress !== "number") return;
    const { progress, total, message } = params;
    sink.progress({ progress, ...(typeof total === "number" ? { total } : {}), ...(typeof message === "string" ? { message } : {}) });
  }

  private async onRequest(message: JsonRpcMessage & { id: RequestId; method: string }, via: Via): Promise<void> {
    const withdrawn = new AbortController();
    this.incoming.set(message.id, withdrawn);
    let reply: JsonRpcMessage;
    try {
      const result = await this.handlers.request(message, via, withdrawn.signal);
      reply = { jsonrpc: "2.0", id: message.id, result };
    } catch (error) {
      const rpc =
        error instanceof UpstreamRpcError
          ? error.error
          : { code: ErrorCode.InternalError, message: error instanceof Error ? error.message : String(error) };
      reply = { jsonrpc: "2.0", id: message.id, error: rpc };
    } finally {
      this.incoming.delete(message.id);
    }
    if (withdrawn.signal.aborted) return; // the upstream cancelled it: no answer is expected
    await this.transport.send(reply).catch((error: unknown) => {
      this.log.warn(
        { event: "upstream.reply.failed", method: message.method, err: error instanceof Error ? error.message : String(error) },
        "answer to an upstream request could not be sent",
      );
    });
  }
}
