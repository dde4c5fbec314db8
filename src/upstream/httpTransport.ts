// HttpTransport: a legacy Streamable HTTP session (2025-03-26 … 2025-11-25) spoken with undici.
// - Each request is its own POST; its response (one JSON message, or an SSE stream of messages
//   ending with the response) is its exchange. Reading stops once the response arrived, or when
//   the request's signal aborts (that closes the HTTP request: a cancelled call leaves nothing open).
//   A call's POST has a connection of its own and is read with undici's callbacks (callExchange.ts);
//   short requests go through the shared pool with request().
// - A stream that ends without the response is resumed with GET + Last-Event-ID when the server
//   gave event ids; otherwise the exchange is lost.
// - The standalone GET stream is opened right after initialize (before notifications/initialized,
//   so nothing the server sends at that moment is lost) and reconnected when it drops.
// - "Session gone" is 404, or 400 saying "No valid session" / "Session not found", on a request
//   that carried a session id (real servers answer both). 401/403 are credential failures.

import type { Logger } from "pino";
import { Agent, type Dispatcher, request } from "undici";
import { traceHeadersOf } from "../observability/tracing.js";
import { abortAfter } from "../util/abortAfter.js";
import { type Deadline, Deadlines } from "../util/deadlines.js";
import { isObject } from "../util/json.js";
import { CallConnections } from "./callConnections.js";
import { CallExchange } from "./callExchange.js";
import { readSse, type SseProgress } from "./sseReader.js";
import {
  type ClosePush,
  EXCHANGE_CLOSED,
  type Exchange,
  type JsonRpcMessage,
  type TransportReceiver,
  type UpstreamTransport,
} from "./transport.js";
import { networkCause, UpstreamFailure } from "./upstreamFailure.js";

export interface HttpTransportOptions {
  url: string;
  /** Keep-alive connection pools of one upstream: `short` for quick requests, notifications and
   *  answers; `calls` for calls that may stream for minutes. Kept apart so a cancel or a ping never
   *  waits behind (or scans past) thousands of streaming calls. */
  dispatchers: UpstreamDispatchers;
  /** Extra headers on every request (credentials towards the upstream), read per request so a
   *  caller's refreshed token is used at once. */
  headers?: () => Record<string, string>;
  /** Whose credentials a 401/403 refused: taskgate's own (static headers) or the caller's (forwarded). */
  credentialsOf?: "taskgate" | "caller";
  log: Logger;
  /** A notification or response POST gives up after this long (upstream.requestTimeoutMs). */
  sendTimeoutMs: number;
  /** How long opened() waits for the standalone GET stream to be answered. */
  standaloneWaitMs?: number;
}

export interface UpstreamDispatchers {
  short: Dispatcher;
  calls: CallConnections;
  /** Aborted first by close(): requests that may wait long (a pushed DELETE) give up then. */
  closing: AbortSignal;
  close(): Promise<void>;
}

/** The connections to one upstream (url): at most `shortConnections` for quick requests (more wait
 *  for one), one per long exchange; connect attempts give up after connectTimeoutMs. */
export function upstreamDispatchers(url: string, connectTimeoutMs: number, shortConnections: number): UpstreamDispatchers {
  const short = new Agent({
    connect: { timeout: connectTimeoutMs },
    connections: shortConnections,
    headersTimeout: 0,
    bodyTimeout: 0,
    keepAliveTimeout: 4_000,
  });
  const calls = new CallConnections({ origin: new URL(url).origin, connectTimeoutMs });
  const closing = new AbortController();
  return {
    short,
    calls,
    closing: closing.signal,
    async close() {
      closing.abort(EXCHANGE_CLOSED);
      await Promise.all([short.close(), calls.close()]);
    },
  };
}

/** An upstream 401/403. The caller's forwarded token refused: 403 to the caller (its token does not
 *  reach that far); taskgate's own credentials refused: 502 (taskgate is misconfigured). */
export function refusedCredentials(status: number, what: string, whose: "taskgate" | "caller"): UpstreamFailure {
  const hint =
    whose === "caller"
      ? "it did not accept the caller's token that taskgate forwards (upstream.forwardAuthorization)"
      : "check upstream.headers";
  return new UpstreamFailure("upstream_auth", `the upstream refused our credentials (HTTP ${status}) on ${what}: ${hint}`, {
    httpStatus: whose === "caller" ? 403 : 502,
    data: { upstreamStatus: status },
  });
}

/** After a call's response, how long its stream may take to end before its connection is dropped. */
const DRAIN_AFTER_ANSWER = Deadlines.of(1_000);
/** The same for a quick request: its connection is one of the few the quick requests share
 *  (upstream.connections), so a server that leaves the stream open must not hold it for long. Servers
 *  end the stream in the same write as the response, or right after it. */
const DRAIN_AFTER_QUICK_ANSWER = Deadlines.of(100);

const STANDALONE_WAIT_MS = 3_000;
/** A DELETE ending an idle session (or at shutdown) gives up after this long. */
const DELETE_TIMEOUT_MS = 2_000;
const RESUME_ATTEMPTS = 3;
const RECONNECT_MAX_MS = 30_000;
/** How long a "session gone" from the standalone stream waits for POSTs in flight to hear their own answers. */
const SETTLE_BEFORE_GONE_MS = 1_000;
const SESSION_GONE_BODY = /no valid session|session not found|unknown session|invalid session/i;
const STANDALONE = { kind: "standalone" } as const;

type Response = Dispatcher.ResponseData;

export class HttpTransport implements UpstreamTransport {
  receiver?: TransportReceiver;
  private session?: string;
  private protocolVersion?: string;
  private closed = false;
  private readonly standalone = new AbortController();
  private readonly exchanges = new Set<Exchange>();
  /** POSTs waiting for their answer's status line, and who waits for them all to have one (see settleBeforeGone). */
  private unanswered = 0;
  private allAnswered: Array<() => void> = [];
  /** The URL parsed once: each POST goes to the dispatcher with it (undici's request() would parse it per call). */
  private readonly origin: string;
  private readonly path: string;

  constructor(private readonly options: HttpTransportOptions) {
    const url = new URL(options.url);
    this.origin = url.origin;
    this.path = url.pathname + url.search;
  }

  get target(): string {
    return this.options.url;
  }

  get sessionId(): string | undefined {
    return this.session;
  }

  sendRequest(message: JsonRpcMessage, exchange: Exchange, long = false): void {
    if (long) return this.sendCall(message, exchange);
    void this.sendQuick(message, exchange);
  }

  /** A quick request's POST on the shared pool; its answer is read in readExchange. */
  private async sendQuick(message: JsonRpcMessage, exchange: Exchange): Promise<void> {
    this.exchanges.add(exchange);
    let response: Response;
    this.unanswered++;
    try {
      response = await this.post(message, exchange.signal);
      // Checked here first: the common answer (2xx, JSON or SSE) passes without an async check awaited.
      if (response.statusCode >= 400 || !answersMcp(response)) {
        throw this.refusal(response.statusCode, header(response, "content-type") ?? "", await readSome(response), String(message.method));
      }
    } catch (error) {
      this.exchanges.delete(exchange);
      exchange.fail(error instanceof Error ? error : new Error(String(error)));
      return;
    } finally {
      this.heard();
    }
    const issued = header(response, "mcp-session-id");
    if (issued && !this.session) this.session = issued;
    await this.readExchange(message.id!, response, exchange);
    this.exchanges.delete(exchange);
  }

  /**
   * A call's POST, on a connection of its own, read with callbacks (callExchange.ts). Closing that
   * connection is how closing the exchange stops the request, with the one shared error, before
   * undici hears of an abort (it would build and format three errors per exchange: thousands at a
   * mass cancel).
   */
  private sendCall(message: JsonRpcMessage, exchange: Exchange): void {
    if (exchange.closed) return exchange.fail(EXCHANGE_CLOSED);
    const { calls } = this.options.dispatchers;
    const client = calls.acquire();
    exchange.onClose(() => void client.destroy(EXCHANGE_CLOSED).catch(() => undefined));
    this.exchanges.add(exchange);
    this.unanswered++;
    const requestId = message.id!;
    let streamed = false;
    let answered = false;
    let drain: Deadline | undefined;
    const end = (clean: boolean) => {
      drain?.cancel();
      this.exchanges.delete(exchange);
      exchange.onClose(undefined);
      calls.release(client, clean && !exchange.closed);
    };
    const deliver = (reply: JsonRpcMessage) => {
      this.receiver?.message(reply, { kind: "exchange", requestId });
      if (!answered && reply.id === requestId && reply.method === undefined) {
        answered = true;
        // Servers end the stream after the response; one that does not loses the connection.
        if (streamed) drain = DRAIN_AFTER_ANSWER.start(() => exchange.close());
      }
    };
    const handler = new CallExchange({
      head: (status, type, body, issued) => {
        if (status >= 400 || !answersMcpWith(status, type)) return "refuse";
        if (issued && !this.session) this.session = issued;
        streamed = body === "sse";
        this.heard();
        return "accept";
      },
      refused: (status, type, text) => {
        end(false);
        exchange.fail(this.refusal(status, type, someOf(text), String(message.method)));
        this.heard();
      },
      failed: (error) => {
        end(false);
        exchange.fail(exchange.closed ? error : this.networkFailure(error, message.method));
        this.heard();
      },
      message: (text) => {
        for (const reply of parseMessages(text)) deliver(reply);
      },
      event: (data) => deliverEvent(data, deliver),
      ended: (error, progress) => {
        if (error) {
          end(false);
          if (!exchange.closed && !this.closed) {
            this.receiver?.exchangeLost(requestId, `the call's stream from the upstream broke: ${networkCause(error)}`);
          }
        } else if (!streamed || answered) end(true);
        else if (exchange.closed) end(false);
        else void this.resume(requestId, progress, exchange.signal, deliver, () => answered).finally(() => end(false));
      },
    });
    const body = JSON.stringify(message);
    client.dispatch({ origin: this.origin, path: this.path, method: "POST", headers: this.postHeaders(message), body }, handler);
  }

  /** A POST's status line came (or it failed without one): settleBeforeGone's waiters hear of the last one. */
  private heard(): void {
    if (--this.unanswered === 0) for (const wake of this.allAnswered.splice(0)) wake();
  }

  async send(message: JsonRpcMessage): Promise<void> {
    // A timer cleared as soon as the answer is in: AbortSignal.timeout would keep every message's
    // signal alive for the whole limit (thousands of cancels would pile up for 30 s).
    const { sendTimeoutMs } = this.options;
    const limit = abortAfter(sendTimeoutMs, () => new Error(`no answer within ${sendTimeoutMs} ms`));
    try {
      const response = await this.post(message, limit.signal);
      await response.body.dump().catch(() => undefined);
      if (response.statusCode >= 400) {
        throw new UpstreamFailure("upstream_lost", `Upstream refused a message (${describeMessage(message)}): HTTP ${response.statusCode}`);
      }
    } finally {
      limit.clear();
    }
  }

  async opened(protocolVersion: string): Promise<boolean> {
    this.protocolVersion = protocolVersion;
    let report: (open: boolean) => void = () => undefined;
    const answered = new Promise<boolean>((resolve) => (report = resolve));
    const timer = setTimeout(() => report(false), this.options.standaloneWaitMs ?? STANDALONE_WAIT_MS);
    void this.runStandalone(report);
    const open = await answered;
    clearTimeout(timer);
    return open;
  }

  async close(push?: ClosePush): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.standalone.abort(EXCHANGE_CLOSED);
    for (const exchange of this.exchanges) exchange.close();
    if (!this.session) return;
    const attempts = push?.attempts ?? 1;
    const { closing } = this.options.dispatchers;
    // A pushed DELETE waits as long as any message may (upstream.requestTimeoutMs): a busy upstream
    // answers late. A plain close stays quick, and taskgate's own shutdown cuts every attempt short.
    const limitMs = push ? this.options.sendTimeoutMs : DELETE_TIMEOUT_MS;
    let why = "";
    for (let attempt = 1; attempt <= attempts && !closing.aborted; attempt++) {
      if (attempt > 1) await sleep(push!.retryMs * 2 ** (attempt - 2), closing);
      const limit = abortAfter(limitMs, () => new Error(`no answer within ${limitMs} ms`), closing);
      try {
        const response = await request(this.options.url, {
          method: "DELETE",
          headers: this.headers(),
          dispatcher: this.options.dispatchers.short,
          signal: limit.signal,
        });
        await response.body.dump();
        // Any answer will do: gone already (404) or no DELETE allowed (405) ends nothing more here.
        return;
      } catch (error) {
        why = networkCause(error);
      } finally {
        limit.clear();
      }
    }
    if (push && push.calls > 0) {
      this.options.log.warn(
        { event: "upstream.session.delete.failed", target: this.options.url, attempts, calls: push.calls, err: why },
        "the DELETE ending an upstream session with calls in flight got no answer: the upstream may still run them",
      );
    }
  }

  // --- internals ---------------------------------------------------------------------------

  /** Before the standalone stream's "session gone" ends the session: lets each POST still waiting for
   *  its status line hear its own answer (bounded by SETTLE_BEFORE_GONE_MS). One the upstream refused
   *  (session gone: it never ran) is then sent again on a new session instead of failing as lost. */
  private async settleBeforeGone(signal: AbortSignal): Promise<void> {
    if (this.unanswered === 0) return;
    let wake: () => void = () => undefined;
    const settled = new Promise<void>((resolve) => (wake = resolve));
    this.allAnswered.push(wake);
    const timer = setTimeout(wake, SETTLE_BEFORE_GONE_MS);
    signal.addEventListener("abort", wake, { once: true });
    await settled;
    clearTimeout(timer);
    signal.removeEventListener("abort", wake);
  }

  /** One new object per request (undici keeps it): the credentials, the session's headers, then `extra`. */
  private headers(extra?: Record<string, string>): Record<string, string> {
    const headers: Record<string, string> = { ...this.options.headers?.() };
    if (this.session) headers["mcp-session-id"] = this.session;
    if (this.protocolVersion) headers["mcp-protocol-version"] = this.protocolVersion;
    return extra ? Object.assign(headers, extra) : headers;
  }

  /** The headers of a POST of `message`: the session's, JSON in, JSON or SSE back, and the request's trace context. */
  private postHeaders(message: JsonRpcMessage): Record<string, string> {
    const headers = this.headers();
    headers["content-type"] = "application/json";
    headers.accept = "application/json, text/event-stream";
    const trace = traceHeadersOf(message.params?._meta); // the request's trace context, in its headers too
    if (trace) Object.assign(headers, trace);
    return headers;
  }

  /** POSTs one message on the short pool (a call's goes on a connection of its own: sendCall). */
  private async post(message: JsonRpcMessage, signal: AbortSignal): Promise<Response> {
    const headers = this.postHeaders(message);
    try {
      if (signal.aborted) throw signal.reason;
      const body = JSON.stringify(message);
      return await this.options.dispatchers.short.request({ origin: this.origin, path: this.path, method: "POST", headers, body, signal });
    } catch (error) {
      if (signal.aborted) throw error;
      throw this.networkFailure(error, message.method);
    }
  }

  /** A network error: could not connect (unreachable), or the connection died after a call was sent (lost). */
  private networkFailure(error: unknown, method: string | undefined): UpstreamFailure {
    const code = (error as { code?: unknown }).code;
    const cause = networkCause(error);
    if (code === "UND_ERR_CONNECT_TIMEOUT") {
      return new UpstreamFailure(
        "upstream_timeout",
        `Upstream timed out: could not connect to ${this.options.url} (upstream.connectTimeoutMs): ${cause}`,
        { cause: error },
      );
    }
    const afterSending = code === "UND_ERR_SOCKET" || code === "ECONNRESET" || code === "UND_ERR_CLOSED";
    if (afterSending && method !== undefined && method !== "initialize" && this.session) {
      return new UpstreamFailure(
        "upstream_lost",
        `Upstream call lost: the connection to the upstream closed before its answer (${cause})`,
        { cause: error },
      );
    }
    return new UpstreamFailure("upstream_unreachable", `Upstream unreachable at ${this.options.url}: ${cause}`, { cause: error });
  }

  /** The failure an answer that is not the exchange's means: non-2xx (`text`, the start of its body,
   *  says more), or a success status with something that is neither JSON nor SSE (not an MCP server). */
  private refusal(status: number, type: string, text: string, what: string): UpstreamFailure {
    if (status < 400) {
      const answered = `'${type || "no content type"}'${text ? `: ${text.slice(0, 80)}` : ""}`;
      if (what === "initialize") {
        return new UpstreamFailure(
          "upstream_not_mcp",
          `Upstream at ${this.options.url} is not an MCP endpoint: it answered ${answered} to initialize`,
        );
      }
      return new UpstreamFailure("upstream_lost", `Upstream answered ${answered} to ${what}, not JSON or SSE`);
    }
    const gone = this.sessionGone(status, text);
    if (gone) return gone;
    if (status === 401 || status === 403) return refusedCredentials(status, what, this.options.credentialsOf ?? "taskgate");
    if (what === "initialize") {
      return new UpstreamFailure(
        "upstream_not_mcp",
        `Upstream at ${this.options.url} is not an MCP endpoint: it answered HTTP ${status} to initialize${text ? `: ${text}` : ""}`,
      );
    }
    return new UpstreamFailure("upstream_lost", `Upstream answered HTTP ${status} to ${what}${text ? `: ${text}` : ""}`);
  }

  /** The failure an answer means when it says the upstream forgot our session (404, or 400 saying so); else undefined. */
  private sessionGone(status: number, body: string): UpstreamFailure | undefined {
    if (!this.session || !(status === 404 || (status === 400 && SESSION_GONE_BODY.test(body)))) return undefined;
    return new UpstreamFailure("session_gone", `the upstream no longer knows session ${this.session} (HTTP ${status})`);
  }

  /** Reads one short exchange's response: to its end, until the exchange closes, or until it is resumed or lost. */
  private async readExchange(requestId: JsonRpcMessage["id"] & {}, response: Response, exchange: Exchange): Promise<void> {
    const { signal } = exchange;
    const type = header(response, "content-type") ?? "";
    let drain: Deadline | undefined;
    try {
      if (response.statusCode === 202) {
        await response.body.dump();
        return; // accepted: the response will come on the standalone stream
      }
      if (type.includes("application/json")) {
        const text = await response.body.text();
        for (const message of parseMessages(text)) this.receiver?.message(message, { kind: "exchange", requestId });
        return;
      }
      let progress: SseProgress = {};
      let answered = false;
      const onMessage = (message: JsonRpcMessage) => {
        this.receiver?.message(message, { kind: "exchange", requestId });
        if (!answered && message.id === requestId && message.method === undefined) {
          answered = true;
          // Servers end the stream after the response; one that does not loses the connection.
          drain = DRAIN_AFTER_QUICK_ANSWER.start(() => exchange.close());
        }
      };
      progress = await readSse(response.body, (event) => deliverEvent(event.data, onMessage), progress);
      if (answered || signal.aborted) return;
      await this.resume(requestId, progress, signal, onMessage, () => answered);
    } catch (error) {
      if (signal.aborted || this.closed) return;
      this.receiver?.exchangeLost(requestId, `the call's stream from the upstream broke: ${networkCause(error)}`);
    } finally {
      drain?.cancel();
    }
  }

  /** The POST stream ended early: resume it by GET + Last-Event-ID, if the server gave ids. */
  private async resume(
    requestId: JsonRpcMessage["id"] & {},
    progress: SseProgress,
    signal: AbortSignal,
    onMessage: (message: JsonRpcMessage) => void,
    answered: () => boolean,
  ): Promise<void> {
    for (let attempt = 1; attempt <= RESUME_ATTEMPTS && progress.lastEventId && !signal.aborted && !this.closed; attempt++) {
      await sleep(progress.retryMs ?? 1_000 * attempt, signal);
      if (signal.aborted) return;
      const connection = this.options.dispatchers.calls.acquire();
      try {
        const response = await request(this.options.url, {
          method: "GET",
          headers: this.headers({ accept: "text/event-stream", "last-event-id": progress.lastEventId }),
          dispatcher: connection,
          signal,
        });
        if (response.statusCode !== 200) await response.body.dump();
        else await readSse(response.body, (event) => deliverEvent(event.data, onMessage), progress);
      } catch {
        // unreachable, or broke again: try once more
      } finally {
        this.options.dispatchers.calls.release(connection, false);
      }
      if (answered()) return;
    }
    if (!signal.aborted && !this.closed) this.receiver?.exchangeLost(requestId, "the upstream ended the call's stream without a result");
  }

  /** Keeps the standalone GET stream open for the session's life, reconnecting with back-off. */
  private async runStandalone(report: (open: boolean) => void): Promise<void> {
    const signal = this.standalone.signal;
    const progress: SseProgress = {};
    let delay = 500;
    let first = true;
    while (!signal.aborted && !this.closed) {
      // Each attempt on a connection of its own, closed when the stream ends (it lives for the session).
      const connection = this.options.dispatchers.calls.acquire();
      try {
        const outcome = await this.standaloneAttempt(connection, progress, signal, (open) => {
          if (first) report(open);
          first = false;
        });
        if (first) report(false);
        first = false;
        if (outcome === "stop") return;
        if (outcome === "stream") delay = 500;
      } finally {
        this.options.dispatchers.calls.release(connection, false);
      }
      await sleep(progress.retryMs ?? delay, signal);
      delay = Math.min(delay * 2, RECONNECT_MAX_MS);
    }
  }

  /** One GET of the standalone stream, read to its end: "stream" (it was one), "none" (try again
   *  later) or "stop" (the server offers none, the session is gone, or we are closing). */
  private async standaloneAttempt(
    connection: Dispatcher,
    progress: SseProgress,
    signal: AbortSignal,
    answered: (isStream: boolean) => void,
  ): Promise<"stream" | "none" | "stop"> {
    let response: Response;
    try {
      const extra: Record<string, string> = { accept: "text/event-stream" };
      if (progress.lastEventId) extra["last-event-id"] = progress.lastEventId;
      response = await request(this.options.url, { method: "GET", headers: this.headers(extra), dispatcher: connection, signal });
    } catch {
      return signal.aborted ? "stop" : "none";
    }
    const status = response.statusCode;
    const isStream = status === 200 && (header(response, "content-type") ?? "").includes("text/event-stream");
    answered(isStream);
    if (!isStream) {
      const text = await readSome(response);
      if (status === 405) return "stop"; // the server offers no standalone stream
      const gone = this.sessionGone(status, text);
      if (!gone) return "none";
      await this.settleBeforeGone(signal);
      this.receiver?.closed(gone);
      return "stop";
    }
    try {
      await readSse(response.body, (event) => deliverEvent(event.data, (message) => this.receiver?.message(message, STANDALONE)), progress);
    } catch {
      // dropped: the caller reconnects
    }
    return signal.aborted ? "stop" : "stream";
  }
}

/** Ends an upstream session another taskgate process left (DELETE with its id); false when it did not answer. */
export async function closeLeftoverSession(options: {
  url: string;
  sessionId: string;
  dispatcher: Dispatcher;
  headers?: Record<string, string>;
}): Promise<boolean> {
  try {
    const response = await request(options.url, {
      method: "DELETE",
      headers: { ...options.headers, "mcp-session-id": options.sessionId },
      dispatcher: options.dispatcher,
      signal: AbortSignal.timeout(2_000),
    });
    await response.body.dump();
    return true;
  } catch {
    return false;
  }
}

/** A 202, or a JSON or SSE body: an answer of the exchange (anything else is refused). */
function answersMcp(response: Response): boolean {
  return answersMcpWith(response.statusCode, header(response, "content-type") ?? "");
}

function answersMcpWith(status: number, type: string): boolean {
  return status === 202 || type.includes("application/json") || type.includes("text/event-stream");
}

function header(response: Response, name: string): string | undefined {
  return firstOf(response.headers[name]);
}

function firstOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

async function readSome(response: Response): Promise<string> {
  try {
    return someOf(await response.body.text());
  } catch {
    return "";
  }
}

/** The start of a refused answer's body, for its error message. */
function someOf(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text.trim();
}

/** One JSON-RPC message, or (2025-03-26) a batch of them. Anything else is skipped. */
function parseMessages(text: string): JsonRpcMessage[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(value)) return isMessage(value) ? [value] : [];
  return value.filter(isMessage);
}

const isMessage = (item: unknown): item is JsonRpcMessage => isObject(item) && item.jsonrpc === "2.0";

/** Hands each message of one SSE event on. Priming events carry no data. */
function deliverEvent(data: string, onMessage: (message: JsonRpcMessage) => void): void {
  for (const message of data ? parseMessages(data) : []) onMessage(message);
}

function describeMessage(message: JsonRpcMessage): string {
  return message.method ?? `response to ${String(message.id)}`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
