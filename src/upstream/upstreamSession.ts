// UpstreamSession: one initialised legacy session (initialize → standalone stream →
// notifications/initialized) over a transport, owned by one identity; it declares the capability
// profile it was opened with. It routes every server→client request to the call it belongs to:
//   1. it came inside the exchange of one of our calls → that call;
//   2. its _meta names a 2025-11-25 upstream task a call follows → that call;
//   3. it came on the standalone channel (HTTP: the GET stream; stdio: everything) → the asking call
//      holding the session alone (`askerOf`), else the one call in flight, if exactly one is;
//   otherwise (no call, or several in flight) it is refused upstream with an error and a warn log —
//   never delivered to a guess. Log messages follow the same rule (unrouted ones are dropped). While calls are in flight the
// session is pinged every pingIntervalMs; a ping unanswered within pingTimeoutMs ends the session
// and fails its calls (upstream_unresponsive) — unless the upstream sent anything else meanwhile
// (progress, results, log messages: a busy upstream answers a ping late, but it is alive), or taskgate
// itself stalled for half the limit while the ping was out (its silence is then not judged). A
// notifications/cancelled for a call (tools/call, prompts/get, resources/read) that stays
// undelivered after upstream.cancelAttempts ends the session too (DELETE attempted, its connections
// closed), so no cancelled call goes on unseen; only the calls of this session fail, with
// upstream_unresponsive naming the cancel. A short request's undelivered cancel (a list, a
// completion: no work that runs on) is counted and logged, and the session kept: a slow list must
// not fail every task the session holds.

import type { Logger } from "pino";
import type { PingOutcome } from "../observability/metrics.js";
import { ErrorCode } from "../protocol/errors.js";
import { type InputRequest, type JsonObject, META, type RequestId } from "../protocol/wire.js";
import { isObject } from "../util/json.js";
import { withDeadline } from "../util/timeLimit.js";
import type { CallContext } from "./callContext.js";
import type { LegacyClientCapabilities } from "./capabilityProfile.js";
import { type CancelOutcome, JsonRpcPeer, type Progress, type RequestOptions, type ResponseSink } from "./jsonRpcPeer.js";
import type { JsonRpcMessage, UpstreamTransport, Via } from "./transport.js";
import { UpstreamFailure, UpstreamRpcError } from "./upstreamFailure.js";

export const LEGACY_PROTOCOL_VERSION = "2025-11-25";

/** How long a call that relays log messages waits after its response for standalone-stream stragglers. */
const LATE_STANDALONE_MS = 20;

/** Requests that may run on upstream for long: an undelivered cancel of one ends the session. */
const CALLS = new Set(["tools/call", "prompts/get", "resources/read"]);

/** LATE_STANDALONE_MS, then one poll phase more: when the process was stalled past the timer (a busy
 *  machine), the timer fires before the poll phase that reads what the other stream received meanwhile. */
const lateStandalone = () => new Promise((resolve) => setTimeout(() => setImmediate(resolve), LATE_STANDALONE_MS));

export interface UpstreamInfo {
  protocolVersion: string;
  capabilities: JsonObject;
  serverInfo: JsonObject;
  instructions?: string;
  /** Whether the standalone stream is open: without it no list change or resource update (and no
   *  GET-stream question) can reach taskgate. */
  notificationStream: boolean;
}

export interface SessionTimeouts {
  initializeTimeoutMs: number;
  pingIntervalMs: number;
  pingTimeoutMs: number;
  /** Attempts to deliver one notifications/cancelled (upstream.cancelAttempts), the first pause between them (doubling). */
  cancelAttempts?: number;
  cancelRetryMs?: number;
}

export interface SessionOptions {
  transport: UpstreamTransport;
  profile: LegacyClientCapabilities;
  clientInfo: { name: string; version: string };
  timeouts: SessionTimeouts;
  log: Logger;
  /** Notifications that belong to no call (list changes, resource updates…). */
  onNotification(message: JsonRpcMessage & { method: string }): void;
  /** The session ended by itself (the upstream forgot it, stopped answering, or the process exited). */
  onClosed(failure: UpstreamFailure): void;
  /** The asking call holding the session alone right now, if any (the pool keeps it). */
  askerOf?: () => CallContext | undefined;
  /** How each notifications/cancelled fared (metrics). */
  onCancel?(outcome: CancelOutcome): void;
  /** How each liveness ping fared (metrics). */
  onPing?(outcome: PingOutcome): void;
}

/** A ping answered in time, late while the upstream still sent other messages (session kept), unjudged because this
 *  process stalled while it was out (session kept), or missed (session ended). */
export type { PingOutcome };

export interface SessionRequestOptions {
  signal?: AbortSignal;
  onprogress?: (progress: Progress) => void;
  /** The call this request is: questions inside its exchange go to it. */
  context?: CallContext;
  timeout?: { ms: number; option: string };
}

const QUESTION_KINDS: Record<string, keyof LegacyClientCapabilities> = {
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots",
};

export class UpstreamSession {
  private readonly calls = new Map<RequestId, CallContext>();
  /** 2025-11-25 upstream task id → the call that follows it. */
  private readonly taskFollowers = new Map<string, CallContext>();
  private pinger?: NodeJS.Timeout | undefined;
  private pinging = false;
  private ended = false;
  info!: UpstreamInfo;
  private readonly peer: JsonRpcPeer;

  private constructor(private readonly options: SessionOptions) {
    this.peer = new JsonRpcPeer(
      options.transport,
      {
        request: (message, via, withdrawn) => this.onServerRequest(message, via, withdrawn),
        notification: (message, via) => this.onNotification(message, via),
        closed: (failure) => this.end(failure),
        cancel: (outcome, requestId, method, why) => this.onCancelOutcome(outcome, requestId, method, why),
        // A call that relays logs keeps its context a moment longer (request(): late standalone log messages).
        ended: (requestId) => {
          if (this.calls.get(requestId)?.relaysLogs !== true) this.calls.delete(requestId);
        },
      },
      options.log,
      { attempts: options.timeouts.cancelAttempts ?? 1, retryMs: options.timeouts.cancelRetryMs ?? 0 },
    );
  }

  static async open(options: SessionOptions): Promise<UpstreamSession> {
    const session = new UpstreamSession(options);
    const { initializeTimeoutMs } = options.timeouts;
    const deadline = Date.now() + initializeTimeoutMs;
    const left = () => Math.max(1, deadline - Date.now());
    try {
      const result = await session.peer.request(
        "initialize",
        { protocolVersion: LEGACY_PROTOCOL_VERSION, capabilities: options.profile, clientInfo: options.clientInfo },
        { timeout: { ms: initializeTimeoutMs, option: "upstream.initializeTimeoutMs" } },
      );
      const protocolVersion = typeof result.protocolVersion === "string" ? result.protocolVersion : LEGACY_PROTOCOL_VERSION;
      const notificationStream = await withDeadline(options.transport.opened(protocolVersion), left(), false);
      await withDeadline(session.peer.notify("notifications/initialized", {}), left(), undefined);
      session.info = {
        protocolVersion,
        capabilities: isObject(result.capabilities) ? result.capabilities : {},
        serverInfo: isObject(result.serverInfo) ? result.serverInfo : { name: "unknown", version: "0" },
        notificationStream,
        ...(typeof result.instructions === "string" ? { instructions: result.instructions } : {}),
      };
    } catch (error) {
      session.ended = true;
      await options.transport.close();
      if (error instanceof UpstreamRpcError) {
        throw new UpstreamFailure("upstream_not_mcp", `Upstream at ${options.transport.target} refused initialize: ${error.message}`);
      }
      throw error;
    }
    if (!session.info.notificationStream) {
      options.log.warn(
        { event: "upstream.notifications.unavailable", target: options.transport.target },
        "upstream offers no standalone stream: list changes, resource updates and questions sent outside a call cannot arrive",
      );
    }
    return session;
  }

  get sessionId(): string | undefined {
    return this.options.transport.sessionId;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** Requests in flight (calls and short requests). */
  get inFlight(): number {
    return this.peer.inFlight;
  }

  /** Calls (requests made for a call, with its context) in flight. */
  get callCount(): number {
    return this.calls.size;
  }

  async request(method: string, params: JsonObject, options: SessionRequestOptions = {}): Promise<JsonObject> {
    if (this.ended) throw new UpstreamFailure("session_gone", "the upstream session ended");
    const id = this.peer.mintId();
    const { context } = options;
    if (context) this.calls.set(id, context);
    this.watchLiveness();
    try {
      const request: RequestOptions = { id, long: context !== undefined };
      if (options.signal) request.signal = options.signal;
      if (options.onprogress) request.onprogress = options.onprogress;
      if (options.timeout) request.timeout = options.timeout;
      const result = await this.peer.request(method, params, request);
      // A log message the upstream sent on the standalone stream just before this response may
      // arrive on that other connection a moment later: a call that relays logs waits for it.
      if (context?.relaysLogs && this.info?.notificationStream) await lateStandalone();
      return result;
    } finally {
      if (context) this.calls.delete(id);
    }
  }

  /**
   * Starts a call at once, its end told to `sink` (the callback form of request() with a context, for the common call's
   * short path); returns its request id, for stop(). Throws session_gone when the session ended. Not for a call that
   * relays log messages (request() waits for late ones).
   */
  start(method: string, params: JsonObject, sink: ResponseSink, context: CallContext): RequestId {
    if (this.ended) throw new UpstreamFailure("session_gone", "the upstream session ended");
    const id = this.peer.mintId();
    this.calls.set(id, context);
    this.watchLiveness();
    try {
      return this.peer.start(method, params, sink, { id, long: true });
    } catch (error) {
      this.calls.delete(id);
      throw error;
    }
  }

  /** Stops a call start() made: notifications/cancelled upstream, its exchange closed, its sink told `error`. */
  stop(requestId: RequestId, error: Error): void {
    this.peer.stop(requestId, error);
  }

  /** Questions tagged with this 2025-11-25 upstream task id go to `context` (until the returned function runs). */
  followTask(taskId: string, context: CallContext): () => void {
    this.taskFollowers.set(taskId, context);
    return () => {
      if (this.taskFollowers.get(taskId) === context) this.taskFollowers.delete(taskId);
    };
  }

  /** Ends the session upstream (DELETE) and here; calls still in flight fail with `failure`. */
  async close(failure = new UpstreamFailure("upstream_lost", "Upstream call lost: taskgate closed the upstream session")): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    this.stopPinging();
    this.peer.failAll(new UpstreamFailure("session_gone", "the upstream session was closed"), failure);
    await this.options.transport.close();
  }

  // --- internals ---------------------------------------------------------------------------

  private end(failure: UpstreamFailure): void {
    if (this.ended) return;
    this.ended = true;
    this.stopPinging();
    // A call in flight may have run: it is lost, never sent again (only a refused request is).
    const lost =
      failure.reason === "session_gone"
        ? new UpstreamFailure(
            "upstream_lost",
            `Upstream call lost: the upstream ended its session without a result for this call (${failure.message})`,
          )
        : failure;
    const calls = this.calls.size;
    this.peer.failAll(failure, lost);
    // Its calls may still run upstream: the DELETE that ends them there is pushed like a cancel.
    const { cancelAttempts = 1, cancelRetryMs = 0 } = this.options.timeouts;
    void this.options.transport.close({ attempts: cancelAttempts, retryMs: cancelRetryMs, calls });
    this.options.onClosed(failure);
  }

  /** The call a server→client request belongs to, and whether that is only inferred (it was the one call in flight). */
  private contextOf(message: JsonRpcMessage, via: Via): { context?: CallContext | undefined; inferred: boolean } {
    if (via.kind === "exchange") return { context: this.calls.get(via.requestId), inferred: false }; // a request that is no call: nobody
    const meta = isObject(message.params?._meta) ? message.params._meta : undefined;
    const related = isObject(meta?.[META.relatedTask]) ? (meta[META.relatedTask] as JsonObject).taskId : undefined;
    if (typeof related === "string" && this.taskFollowers.has(related))
      return { context: this.taskFollowers.get(related), inferred: false };
    const asker = this.options.askerOf?.();
    return asker ? { context: asker, inferred: false } : { context: this.onlyCall(), inferred: true };
  }

  /** Who a standalone message belongs to: the asking call holding the session, else the only call in flight. */
  private standaloneOwner(): CallContext | undefined {
    return this.options.askerOf?.() ?? this.onlyCall();
  }

  private onlyCall(): CallContext | undefined {
    return this.calls.size === 1 ? this.calls.values().next().value : undefined;
  }

  private async onServerRequest(
    message: JsonRpcMessage & { id: RequestId; method: string },
    via: Via,
    withdrawn: AbortSignal,
  ): Promise<JsonObject> {
    if (message.method === "ping") return {};
    const kind = QUESTION_KINDS[message.method];
    if (!kind) throw new UpstreamRpcError({ code: ErrorCode.MethodNotFound, message: `taskgate does not answer ${message.method}` });
    if (!this.options.profile[kind]) {
      throw new UpstreamRpcError({ code: ErrorCode.MethodNotFound, message: `this session did not declare the '${kind}' capability` });
    }
    const { context, inferred } = this.contextOf(message, via);
    if (!context) {
      const calls = this.calls.size;
      this.options.log.warn(
        { event: "upstream.question.unrouted", method: message.method, via: via.kind, calls },
        calls === 0
          ? "upstream asked outside any call: refused"
          : "upstream asked outside a call's stream while several calls run: refused",
      );
      throw new UpstreamRpcError({
        code: ErrorCode.InvalidRequest,
        message:
          calls === 0
            ? "taskgate cannot tell which call this request belongs to: no call of this session is in flight"
            : `taskgate cannot tell which call this request belongs to: ${calls} calls of this client are in flight ` +
              "and it came outside their streams",
      });
    }
    return context.onInput(inputRequest(message.method as InputRequest["method"], message.params), withdrawn, inferred);
  }

  private onNotification(message: JsonRpcMessage & { method: string }, via: Via): void {
    if (message.method === "notifications/message") {
      const context = via.kind === "exchange" ? this.calls.get(via.requestId) : this.standaloneOwner();
      const params = message.params ?? {};
      context?.onLog?.({
        level: String(params.level ?? "info"),
        data: params.data,
        ...(typeof params.logger === "string" ? { logger: params.logger } : {}),
      });
      return;
    }
    if (message.method === "notifications/elicitation/complete") return; // 2026-07-28 has no such thing
    this.options.onNotification(message);
  }

  private onCancelOutcome(outcome: CancelOutcome, requestId: RequestId, method: string, why: string | undefined): void {
    this.options.onCancel?.(outcome);
    if (outcome !== "undelivered" || this.ended) return; // an ended session has said why already
    if (!CALLS.has(method)) return; // a short request runs on no further: counted and logged, the session kept
    const attempts = this.options.timeouts.cancelAttempts ?? 1;
    this.options.log.warn(
      { event: "upstream.session.ended.cancel", target: this.options.transport.target, requestId, calls: this.calls.size },
      "a cancel could not reach the upstream: taskgate ends that call's session so the call does not run on unseen",
    );
    this.end(
      new UpstreamFailure(
        "upstream_unresponsive",
        `Upstream stopped answering: notifications/cancelled for request ${String(requestId)} could not be delivered in ` +
          `${attempts} attempt(s) (upstream.cancelAttempts)${why ? `: ${why}` : ""}; taskgate ended this upstream session`,
      ),
    );
  }

  /** Pings the upstream while calls are in flight; an unanswered ping ends the session, unless the upstream sent anything meanwhile.
   *  The pinger starts with the first call and stops itself at a tick with none left (not at every call's end: one
   *  call after another would make and clear a timer each). */
  private watchLiveness(): void {
    if (this.calls.size > 0 && !this.pinger && !this.ended) {
      this.pinger = setInterval(() => {
        if (this.calls.size === 0) this.stopPinging();
        else void this.ping();
      }, this.options.timeouts.pingIntervalMs);
      this.pinger.unref();
    }
  }

  private stopPinging(): void {
    clearInterval(this.pinger);
    this.pinger = undefined;
  }

  private async ping(): Promise<void> {
    if (this.pinging || this.ended) return;
    this.pinging = true;
    const askedAt = performance.now();
    try {
      const { pingTimeoutMs } = this.options.timeouts;
      await this.peer.request("ping", {}, { timeout: { ms: pingTimeoutMs, option: "upstream.pingTimeoutMs" } });
      this.options.onPing?.("answered");
    } catch (error) {
      // Other failures (the session ended meanwhile) are reported by whoever saw them.
      if (error instanceof UpstreamFailure && error.reason === "upstream_timeout") await this.judgeSilence(askedAt);
    } finally {
      this.pinging = false;
    }
  }

  /** A ping asked at `askedAt` went unanswered within its limit: late (the upstream is talking), not judged (this process
   *  stalled while it was out), or missed (the session ends). */
  private async judgeSilence(askedAt: number): Promise<void> {
    const { pingTimeoutMs } = this.options.timeouts;
    // After a stall of this process (a loaded machine, a long GC) the timer fires before the poll
    // phase has read what waits in the sockets: let that in before judging the silence.
    await pendingInput();
    const now = performance.now();
    const heardMsAgo = now - this.peer.lastHeardAt;
    // How late the verdict comes: a time this process did not run. A ping it stalled on for half its limit may not have
    // had the rest (its request may have been written only after the stall), so its silence is not the upstream's.
    const stalledMs = now - askedAt - pingTimeoutMs;
    const { target } = this.options.transport;
    const calls = this.calls.size;
    if (heardMsAgo < pingTimeoutMs) {
      // Late, but the upstream is talking (progress, results): busy, not gone. The next ping asks again.
      this.options.onPing?.("late");
      const fields = { event: "upstream.ping.late", target, calls, heardMsAgo: Math.round(heardMsAgo) };
      return this.options.log.info(fields, "upstream answered no ping in time but is still sending: the session is kept");
    }
    if (stalledMs >= pingTimeoutMs / 2) {
      // Not judged: the next ping asks again, on a process that runs.
      this.options.onPing?.("stalled");
      const fields = { event: "upstream.ping.stalled", target, calls, stalledMs: Math.round(stalledMs) };
      return this.options.log.info(fields, "taskgate stalled while its ping was out: the silence is not judged, the session is kept");
    }
    this.options.onPing?.("missed");
    this.options.log.warn({ event: "upstream.unresponsive", target, calls }, "upstream stopped answering pings");
    this.end(
      new UpstreamFailure(
        "upstream_unresponsive",
        `Upstream stopped answering: no answer to ping within ${pingTimeoutMs} ms (upstream.pingTimeoutMs)`,
      ),
    );
  }
}

/** A legacy server-to-client request in its 2026-07-28 input-request shape: no _meta, and URL
 *  elicitations without elicitationId (2026 has none; its completion notification is dropped). */
function inputRequest(method: InputRequest["method"], params: JsonObject | undefined): InputRequest {
  const { _meta: _legacyMeta, elicitationId: _id, ...rest } = params ?? {};
  return { method, params: rest };
}

/** Two turns of the event loop, each past its poll phase: data already waiting in the sockets has been read and delivered. */
const pendingInput = async () => {
  for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
};
