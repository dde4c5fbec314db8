// UpstreamTransport: how JSON-RPC messages travel to one legacy session and back. Each request
// the client sends opens an *exchange* (Streamable HTTP: the POST and its response stream; stdio:
// none), and every message the upstream sends says where it came from (`Via`): inside the
// exchange of one of our requests, or on the session's standalone channel (the HTTP GET stream,
// or a stdio process's stdout). That is what lets every server→client request reach its call.

import type { JsonObject, JsonRpcErrorObject, RequestId } from "../protocol/wire.js";
import type { UpstreamFailure } from "./upstreamFailure.js";

/**
 * The reason every closed exchange is aborted with. One shared error whose stack is already
 * formatted: closing thousands of exchanges (a mass cancel) must not build and format an error
 * each (Node's stream teardown reads `.stack`; undici would make a fresh AbortError otherwise).
 */
export const EXCHANGE_CLOSED: Error = (() => {
  const error = new Error("exchange closed by taskgate");
  void error.stack;
  return error;
})();

/**
 * One request's exchange (HTTP: its POST and the stream of its answer), closed once by whoever is done
 * with it first: the peer when the request ended, the transport to drop a stream that does not end
 * after its answer, or the session's close. A plain object with one closer, not an AbortController:
 * every call has one, and on Node 20 an AbortSignal outlives the scavenge after it was dropped
 * (docs/benchmarks.md). A signal is made only for an API that takes one (undici's request()).
 */
export abstract class Exchange {
  private closer?: (() => void) | undefined;
  private controller?: AbortController;
  private done = false;

  get closed(): boolean {
    return this.done;
  }

  /** What closes the exchange's stream (the transport's one closer; undefined: none any more). Runs at once when closed already. */
  onClose(closer: (() => void) | undefined): void {
    if (this.done) closer?.();
    else this.closer = closer;
  }

  close(): void {
    if (this.done) return;
    this.done = true;
    const closer = this.closer;
    this.closer = undefined;
    closer?.();
    this.controller?.abort(EXCHANGE_CLOSED);
  }

  /** The request was not accepted (HTTP: refused, unreachable; session_gone: it never ran): the transport says why. */
  abstract fail(error: Error): void;

  /** A signal aborted (with EXCHANGE_CLOSED) when the exchange closes, made on first use. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.done) this.controller.abort(EXCHANGE_CLOSED);
    }
    return this.controller.signal;
  }
}

/** How hard a session's end is pushed upstream (upstream.cancelAttempts, cancelRetryMs) and how many calls it ends. */
export interface ClosePush {
  attempts: number;
  retryMs: number;
  calls: number;
}

export type Via = { kind: "exchange"; requestId: RequestId } | { kind: "standalone" };

export interface JsonRpcMessage {
  jsonrpc: "2.0";
  id?: RequestId;
  method?: string;
  params?: JsonObject;
  result?: JsonObject;
  error?: JsonRpcErrorObject;
}

export interface TransportReceiver {
  message(message: JsonRpcMessage, via: Via): void;
  /** The exchange of request `requestId` ended without its response and cannot be resumed. */
  exchangeLost(requestId: RequestId, why: string): void;
  /** The session is gone (HTTP: the upstream forgot it; stdio: the process exited). */
  closed(failure: UpstreamFailure): void;
}

export interface UpstreamTransport {
  /** Where the upstream is, for messages and logs. */
  readonly target: string;
  /** The upstream's session id, once it issued one. */
  readonly sessionId: string | undefined;
  receiver?: TransportReceiver;
  /**
   * Sends a request. When the upstream does not accept it (HTTP: no 2xx JSON or SSE answer came back)
   * the transport tells `exchange.fail()` why, with an UpstreamFailure (session_gone: it never ran). Messages of its
   * exchange arrive through the receiver until its response did, or `exchange` is closed. The
   * caller closes it when the request ends; the transport may close it too (HTTP: to drop a
   * connection whose stream does not end after the answer, or at close) — one Exchange, not one
   * on each side. `long`: a call that may run for minutes (HTTP keeps such
   * exchanges apart from short ones).
   */
  sendRequest(message: JsonRpcMessage, exchange: Exchange, long?: boolean): void;
  /** Sends a notification or a response to an upstream request. */
  send(message: JsonRpcMessage): Promise<void>;
  /** After initialize: remember the negotiated version; open the standalone channel. Resolves
   *  whether the upstream offers one (false: list changes and GET-stream questions cannot arrive). */
  opened(protocolVersion: string): Promise<boolean>;
  /** Ends the session upstream (HTTP DELETE; stdio: stdin closed, then signals) and locally; `push`:
   *  the session ended itself with calls in flight, so the DELETE is sent again if it fails. */
  close(push?: ClosePush): Promise<void>;
}
