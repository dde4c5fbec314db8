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
   * Sends a request. Resolves once the upstream accepted it (HTTP: response headers came back);
   * rejects with an UpstreamFailure when it was not (session_gone: it never ran). Messages of its
   * exchange arrive through the receiver until its response did, or `exchange` is aborted. The
   * caller aborts it when the request ends; the transport may abort it too (HTTP: to drop a
   * connection whose stream does not end after the answer, or at close) — one controller per
   * exchange, not one on each side. `long`: a call that may run for minutes (HTTP keeps such
   * exchanges apart from short ones).
   */
  sendRequest(message: JsonRpcMessage, exchange: AbortController, long?: boolean): Promise<void>;
  /** Sends a notification or a response to an upstream request. */
  send(message: JsonRpcMessage): Promise<void>;
  /** After initialize: remember the negotiated version; open the standalone channel. Resolves
   *  whether the upstream offers one (false: list changes and GET-stream questions cannot arrive). */
  opened(protocolVersion: string): Promise<boolean>;
  /** Ends the session upstream (HTTP DELETE; stdio: stdin closed, then signals) and locally; `push`:
   *  the session ended itself with calls in flight, so the DELETE is sent again if it fails. */
  close(push?: ClosePush): Promise<void>;
}
