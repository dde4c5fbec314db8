// ModernLink: speaks 2026-07-28 to a backend that already does (Streamable HTTP, no session): one
// POST per request, with the standard headers built from the body (MCP-Protocol-Version,
// Mcp-Method, Mcp-Name), the Mcp-Param-* headers the client sent, the credentials the backend is
// shown of taskgate and the caller, and the trace context: with tracing on each exchange is a client
// span whose context replaces the caller's in the request's `_meta` and goes in its headers too
// (taskgate's own task polls and era probes go untraced). The answer is one JSON message or an
// SSE stream (notifications related to the request, then the response); `exchange()` yields them
// in order and ends after the response. Closing the exchange (its signal) closes the HTTP request:
// in 2026-07-28 that is the cancellation. A JSON-RPC error body is a message like any other, whatever
// the HTTP status; anything else that is not MCP is an UpstreamFailure naming what was answered.

import { Agent, type Dispatcher, request } from "undici";
import { failSpan, failureOf, type Span, traceHeadersOf } from "../observability/tracing.js";
import { endClientSpan, startClientSpan } from "../observability/upstreamSpan.js";
import type { HeaderMap } from "../protocol/headerValue.js";
import type { UpstreamReason } from "../protocol/reasons.js";
import { type JsonObject, META, NAME_PARAM, PROTOCOL_VERSION } from "../protocol/wire.js";
import { isObject } from "../util/json.js";
import { refusedCredentials } from "./httpTransport.js";
import { readSse } from "./sseReader.js";
import { networkCause, UpstreamFailure } from "./upstreamFailure.js";

export interface ModernLinkOptions {
  url: string;
  connectTimeoutMs: number;
  /** Connections open at once for short requests; more wait for one (upstream.connections). Long ones have their own. */
  connections: number;
  /** A short request (lists, discover, tasks/*) gives up after this long (upstream.requestTimeoutMs). */
  requestTimeoutMs: number;
  /** Whose credentials a 401/403 refused: taskgate's own (static headers) or the caller's (forwarded). */
  credentialsOf: "taskgate" | "caller";
  /** Told of every failure by its reason (upstream_errors_total). */
  onFailure?: (reason: UpstreamReason) => void;
}

/** One 2026-07-28 request towards the backend. `headers`: credentials and the client's Mcp-Param-*. */
export interface ModernRequest {
  id: string | number;
  method: string;
  params: JsonObject;
  headers: Record<string, string>;
  signal?: AbortSignal;
  /** The exchange may stream for long (a call): no response-time limit. */
  long?: boolean;
  /** A request taskgate repeats on its own (a task poll, an era probe): no span, it would bury the trace. */
  untraced?: boolean;
}

/** A message the backend sent in one exchange, and the HTTP status it came with. */
export interface ModernMessage {
  message: JsonObject;
  httpStatus: number;
}

const HEADER_SAFE = /^[\x21-\x7E]([\x20-\x7E]*[\x21-\x7E])?$/;

/** A value as an MCP header value: as is when plain visible ASCII, else the base64 sentinel. */
export function mcpHeaderValue(value: string): string {
  return HEADER_SAFE.test(value) && !value.startsWith("=?base64?") ? value : `=?base64?${Buffer.from(value).toString("base64")}?=`;
}

/** The client's Mcp-Param-* headers: the backend checks them against its tools' schemas. */
export function paramHeadersOf(headers: HeaderMap): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!name.toLowerCase().startsWith("mcp-param-") || value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

export class ModernLink {
  /** Short requests share at most `connections`; long ones (calls that may stream) are not capped. */
  private readonly short: Dispatcher;
  private readonly long: Dispatcher;
  private ids = 0;
  /** Each exchange's controller while it runs: close() ends them (a backend may hold a stream open for good). */
  private readonly live = new Set<AbortController>();
  private closed = false;

  constructor(private readonly options: ModernLinkOptions) {
    const settings = { connect: { timeout: options.connectTimeoutMs }, headersTimeout: 0, bodyTimeout: 0 };
    this.short = new Agent({ ...settings, connections: options.connections });
    this.long = new Agent(settings);
  }

  get url(): string {
    return this.options.url;
  }

  /** A fresh id for a request taskgate sends (ids are never shared between callers). */
  nextId(): string {
    this.ids += 1;
    return `tg-${this.ids}`;
  }

  /** The messages of one exchange, the response last; with tracing on, in a client span (off: no extra layer). */
  exchange(req: ModernRequest): AsyncGenerator<ModernMessage> {
    const traced = req.untraced ? undefined : startClientSpan(req.method, req.id, req.params, this.options.url);
    return traced ? this.tracedExchange({ ...req, params: traced.params }, traced.span) : this.exchangeOnce(req);
  }

  private async *tracedExchange(req: ModernRequest, span: Span): AsyncGenerator<ModernMessage> {
    let ended = false;
    try {
      for await (const found of this.exchangeOnce(req)) {
        // The span ends with the response, before it is handed on: a consumer may stop there without closing the exchange.
        if (!isNotification(found.message)) {
          ended = true;
          endClientSpan(span, found.message);
        }
        yield found;
      }
    } catch (error) {
      if (!ended) failSpan(span, failureOf(error));
      throw error;
    } finally {
      if (!ended) span.end();
    }
  }

  private async *exchangeOnce(req: ModernRequest): AsyncGenerator<ModernMessage> {
    const controller = new AbortController();
    const stop = () => controller.abort(req.signal?.reason);
    req.signal?.addEventListener("abort", stop, { once: true });
    const timer = req.long ? undefined : setTimeout(() => controller.abort(new Error("timeout")), this.options.requestTimeoutMs);
    this.live.add(controller);
    if (this.closed) controller.abort(LINK_CLOSED); // its POST is then refused at once, as close() ends those running
    try {
      const response = await this.post(req, controller.signal);
      yield* this.messagesOf(req, response);
    } catch (error) {
      if (req.signal?.aborted) return;
      const failure =
        controller.signal.reason === LINK_CLOSED
          ? new UpstreamFailure("shutting_down", `taskgate is shutting down: its ${req.method} to the backend was ended`)
          : controller.signal.aborted && timer
            ? new UpstreamFailure(
                "upstream_timeout",
                `Upstream timed out: no answer to ${req.method} within ${this.options.requestTimeoutMs} ms (upstream.requestTimeoutMs)`,
              )
            : error;
      if (failure instanceof UpstreamFailure) this.options.onFailure?.(failure.reason);
      throw failure;
    } finally {
      this.live.delete(controller);
      clearTimeout(timer);
      req.signal?.removeEventListener("abort", stop);
      controller.abort();
    }
  }

  /** The response of one exchange (notifications on the way are dropped): for short requests. */
  async send(req: ModernRequest): Promise<ModernMessage> {
    for await (const message of this.exchange(req)) if (!isNotification(message.message)) return message;
    throw new UpstreamFailure("upstream_lost", `Upstream call lost: the backend ended ${req.method}'s stream without a response`);
  }

  /** Ends every exchange still running (undici's close() would wait for each, and a stream may never end), then the connections. */
  async close(): Promise<void> {
    this.closed = true;
    for (const controller of this.live) controller.abort(LINK_CLOSED);
    await Promise.all([this.short.close(), this.long.close()]);
  }

  private async post(req: ModernRequest, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    const name = NAME_PARAM[req.method] ? req.params[NAME_PARAM[req.method] as string] : undefined;
    const meta = isObject(req.params._meta) ? req.params._meta : {};
    const version = typeof meta[META.protocolVersion] === "string" ? (meta[META.protocolVersion] as string) : PROTOCOL_VERSION;
    try {
      return await request(this.options.url, {
        method: "POST",
        dispatcher: req.long ? this.long : this.short,
        signal,
        headers: {
          ...req.headers,
          ...traceHeadersOf(meta),
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": version,
          "mcp-method": req.method,
          ...(typeof name === "string" || typeof name === "number" ? { "mcp-name": mcpHeaderValue(String(name)) } : {}),
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: req.id, method: req.method, params: req.params }),
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new UpstreamFailure("upstream_unreachable", `Upstream unreachable at ${this.options.url}: ${networkCause(error)}`, {
        cause: error,
      });
    }
  }

  private async *messagesOf(req: ModernRequest, response: Dispatcher.ResponseData): AsyncGenerator<ModernMessage> {
    const status = response.statusCode;
    const type = String(response.headers["content-type"] ?? "");
    if (status === 401 || status === 403) {
      await response.body.dump();
      throw refusedCredentials(status, req.method, this.options.credentialsOf);
    }
    if (type.includes("text/event-stream") && status < 300) {
      const queue: JsonObject[] = [];
      let wake: (() => void) | undefined;
      let ended = false;
      let broken: unknown;
      void readSse(response.body, (event) => {
        const parsed = parseJson(event.data);
        if (parsed) queue.push(parsed);
        wake?.();
      })
        .catch((error: unknown) => (broken = error))
        .finally(() => {
          ended = true;
          wake?.();
        });
      for (;;) {
        const next = queue.shift();
        if (next) {
          yield { message: next, httpStatus: status };
          if (!isNotification(next)) return;
          continue;
        }
        if (ended) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      if (req.signal?.aborted) return;
      throw new UpstreamFailure(
        "upstream_lost",
        `Upstream call lost: the backend's stream for ${req.method} ended without a response${broken ? ` (${networkCause(broken)})` : ""}`,
      );
    }
    const text = await response.body.text();
    const parsed = parseJson(text);
    if (parsed && (isObject(parsed.error) || isObject(parsed.result))) {
      yield { message: parsed, httpStatus: status };
      return;
    }
    throw new UpstreamFailure(
      "upstream_not_mcp",
      `Upstream at ${this.options.url} is not an MCP endpoint: HTTP ${status} (${type || "no content type"}) to ${req.method}`,
      { data: { upstreamStatus: status } },
    );
  }
}

/** The abort reason of the exchanges close() ends. */
const LINK_CLOSED = new Error("the link to the backend was closed");

const isNotification = (message: JsonObject): boolean => typeof message.method === "string" && message.id === undefined;

function parseJson(text: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
