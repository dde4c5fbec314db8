// ScriptedTransport: an UpstreamTransport whose far end is a script the test writes — the seam
// the upstream layer (JsonRpcPeer, UpstreamSession, UpstreamPool) is built on, so those can be
// unit-tested without sockets. It is not a fake MCP server: each test scripts only the messages it
// needs, and says on which channel (an exchange or the standalone one) each arrives, which a real
// server cannot be made to choose. e2e tests run the same layer over HTTP and stdio against real
// servers.

import type { JsonObject, RequestId } from "../../src/protocol/wire.js";
import type { Exchange, JsonRpcMessage, TransportReceiver, UpstreamTransport, Via } from "../../src/upstream/transport.js";
import { UpstreamFailure } from "../../src/upstream/upstreamFailure.js";

/** The far end: called with every message the client sends (requests, notifications, answers). */
export type Script = (message: JsonRpcMessage, transport: ScriptedTransport) => void;

export const exchangeOf = (requestId: RequestId): Via => ({ kind: "exchange", requestId });
export const STANDALONE: Via = { kind: "standalone" };

/** A script answering initialize (declaring `capabilities`) and ping; everything else goes to `rest`. */
export function server(rest: Script = () => undefined, capabilities: JsonObject = {}): Script {
  return (message, transport) => {
    if (message.method === "initialize") {
      transport.reply(message, { protocolVersion: "2025-11-25", capabilities, serverInfo: { name: "scripted", version: "1" } });
    } else if (message.method === "ping" && message.id !== undefined) {
      transport.reply(message, {});
    } else {
      rest(message, transport);
    }
  };
}

export class ScriptedTransport implements UpstreamTransport {
  receiver?: TransportReceiver;
  readonly target = "scripted upstream";
  sessionId: string | undefined;
  /** Every message the client sent, in order. */
  readonly sent: JsonRpcMessage[] = [];
  /** The exchange of every request, by id. */
  readonly exchanges = new Map<RequestId, Exchange>();
  closed = false;
  /** When set, sendRequest rejects with it (e.g. session_gone: the upstream forgot the session). */
  refuseWith?: UpstreamFailure;
  private readonly answers = new Map<RequestId, (message: JsonRpcMessage) => void>();
  private nextServerId = 0;

  constructor(
    private readonly script: Script,
    sessionId?: string,
  ) {
    this.sessionId = sessionId;
  }

  sendRequest(message: JsonRpcMessage, exchange: Exchange): void {
    // Refused a tick later, as over a wire.
    if (this.closed) return queueMicrotask(() => exchange.fail(new UpstreamFailure("session_gone", "the scripted session was closed")));
    const refusal = this.refuseWith;
    if (refusal && message.method !== "initialize") return queueMicrotask(() => exchange.fail(refusal));
    this.sent.push(message);
    if (message.id !== undefined) this.exchanges.set(message.id, exchange);
    queueMicrotask(() => this.script(message, this));
  }

  async send(message: JsonRpcMessage): Promise<void> {
    this.sent.push(message);
    if (message.method === undefined && message.id !== undefined) {
      const waiter = this.answers.get(message.id);
      this.answers.delete(message.id);
      waiter?.(message);
      return;
    }
    this.script(message, this);
  }

  async opened(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** Sends the response to `request` (inside its exchange unless `via` says otherwise). */
  reply(request: JsonRpcMessage, result: JsonObject, via: Via = exchangeOf(request.id as RequestId)): void {
    this.receiver?.message({ jsonrpc: "2.0", id: request.id as RequestId, result }, via);
  }

  /** Sends a JSON-RPC error response to `request`. */
  fail(request: JsonRpcMessage, code: number, message: string): void {
    this.receiver?.message({ jsonrpc: "2.0", id: request.id as RequestId, error: { code, message } }, exchangeOf(request.id as RequestId));
  }

  notify(method: string, params: JsonObject, via: Via = STANDALONE): void {
    this.receiver?.message({ jsonrpc: "2.0", method, params }, via);
  }

  /** Asks the client something on `via`; resolves with the client's answer (result or error). */
  ask(method: string, params: JsonObject, via: Via): Promise<JsonRpcMessage> {
    const id = `server-${++this.nextServerId}`;
    const answered = new Promise<JsonRpcMessage>((resolve) => this.answers.set(id, resolve));
    this.receiver?.message({ jsonrpc: "2.0", id, method, params }, via);
    return answered;
  }

  /** The session ended upstream (HTTP: it forgot the session; stdio: the process exited). */
  end(failure: UpstreamFailure): void {
    this.receiver?.closed(failure);
  }

  /** The messages sent with this method. */
  sentOf(method: string): JsonRpcMessage[] {
    return this.sent.filter((message) => message.method === method);
  }
}
