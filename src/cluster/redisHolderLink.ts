// RedisHolderLink: request/reply to the instance holding an upstream call, over Redis pub/sub.
// serve() listens on `<prefix>:instance:<selfId>` for { requestId, replyTo, command } and PUBLISHes
// { requestId, reply } on `<prefix>:reply:<replyTo>`, and { requestId, working: true } every
// heartbeatMs while its handler runs. send() resolves the reply, or undefined when nothing came for
// timeoutMs (each sign of work starts that wait again) or at once when PUBLISH reaches nobody (the
// holder is gone). A throwing handler replies -32603.

import { randomUUID } from "node:crypto";
import { ErrorCode } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/wire.js";
import { isObject } from "../util/json.js";
import type { HolderCommand, HolderLink, HolderReply } from "./holderLink.js";
import { closeRedis, connectPubSub, type RedisConnection } from "./redisConnection.js";

const replyChannelOf = (prefix: string, replyTo: string) => `${prefix}:reply:${replyTo}`;

export interface RedisHolderLinkOptions {
  url: string;
  prefix: string;
  instanceId: string;
  /** How often a holder whose handler still runs says so (default 1 s; keep it well under the senders' timeouts). */
  heartbeatMs?: number;
  /** Unreadable messages, failed replies, connection errors. Default: ignored. */
  onError?: ((error: Error) => void) | undefined;
}

interface Pending {
  resolve(reply: HolderReply | undefined): void;
  timer: NodeJS.Timeout;
  timeoutMs: number;
}

const DEFAULT_HEARTBEAT_MS = 1_000;

function isHolderCommand(value: unknown): value is HolderCommand {
  if (!isObject(value) || typeof value.ownerHash !== "string") return false;
  switch (value.kind) {
    case "cancel":
      return typeof value.taskId === "string";
    case "update":
      return typeof value.taskId === "string" && isObject(value.responses);
    case "resume":
      return (
        ["requestState", "method", "name", "args"].every((key) => typeof value[key] === "string") &&
        isObject(value.inputResponses) &&
        isObject(value.capabilities) &&
        typeof value.asTask === "boolean"
      );
    case "leave":
      return typeof value.requestState === "string";
    default:
      return false;
  }
}

function isHolderReply(value: unknown): value is HolderReply {
  if (!isObject(value)) return false;
  if (value.ok === true) return value.result === undefined || isObject(value.result);
  return (
    value.ok === false &&
    isObject(value.error) &&
    typeof value.error.code === "number" &&
    typeof value.error.message === "string" &&
    (value.httpStatus === undefined || typeof value.httpStatus === "number")
  );
}

/** A short name of a command for error messages. */
const describe = (command: HolderCommand) => ("taskId" in command ? `${command.kind} for ${command.taskId}` : command.kind);

export class RedisHolderLink implements HolderLink {
  private readonly pending = new Map<string, Pending>();
  private serving = false;
  private closed = false;

  private constructor(
    private readonly publisher: RedisConnection,
    private readonly subscriber: RedisConnection,
    private readonly prefix: string,
    private readonly instanceId: string,
    /** Unique per link (not just per instance id), so replies never reach a stale namesake. */
    private readonly replyTo: string,
    private readonly onError: (error: Error) => void,
    private readonly heartbeatMs: number,
  ) {}

  /** Resolves once this link's reply channel is subscribed (send() works from then on). */
  static async connect(options: RedisHolderLinkOptions): Promise<RedisHolderLink> {
    const onError = options.onError ?? (() => undefined);
    const replyTo = `${options.instanceId}:${randomUUID()}`;
    // Replies cannot arrive before `link` is set: nothing was sent yet.
    let link: RedisHolderLink | undefined;
    const { publisher, subscriber } = await connectPubSub({ url: options.url, onError }, (sub) =>
      sub.subscribe(replyChannelOf(options.prefix, replyTo), (message: string) => link?.onReply(message)),
    );
    link = new RedisHolderLink(
      publisher,
      subscriber,
      options.prefix,
      options.instanceId,
      replyTo,
      onError,
      options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    );
    return link;
  }

  private instanceChannel(instanceId: string): string {
    return `${this.prefix}:instance:${instanceId}`;
  }

  async serve(handler: (command: HolderCommand) => Promise<HolderReply>): Promise<void> {
    if (this.closed) throw new Error("RedisHolderLink is closed");
    if (this.serving) throw new Error("RedisHolderLink is already serving");
    this.serving = true;
    await this.subscriber.subscribe(this.instanceChannel(this.instanceId), (message: string) => {
      void this.onRequest(message, handler);
    });
  }

  async send(holder: string, command: HolderCommand, timeoutMs = 3_000): Promise<HolderReply | undefined> {
    if (this.closed) return undefined;
    const requestId = randomUUID();
    const answer = new Promise<HolderReply | undefined>((resolve) => {
      const timer = setTimeout(() => this.settle(requestId, undefined), timeoutMs);
      this.pending.set(requestId, { resolve, timer, timeoutMs });
    });
    try {
      const receivers = await this.publisher.publish(
        this.instanceChannel(holder),
        JSON.stringify({ requestId, replyTo: this.replyTo, command }),
      );
      if (receivers === 0) this.settle(requestId, undefined); // nobody serves that instance
    } catch (error) {
      this.onError(new Error(`sending ${describe(command)} to ${holder} failed`, { cause: error }));
      this.settle(requestId, undefined);
    }
    return answer;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const requestId of [...this.pending.keys()]) this.settle(requestId, undefined);
    try {
      if (this.subscriber.isReady) await this.subscriber.unsubscribe();
    } catch {
      // The connection is going away anyway.
    }
    await Promise.all([closeRedis(this.subscriber), closeRedis(this.publisher)]);
  }

  private settle(requestId: string, reply: HolderReply | undefined): void {
    const pending = this.pending.get(requestId);
    if (pending === undefined) return;
    this.pending.delete(requestId);
    clearTimeout(pending.timer);
    pending.resolve(reply);
  }

  private onReply(message: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch (error) {
      this.onError(new Error("unreadable holder reply", { cause: error }));
      return;
    }
    if (isObject(parsed) && typeof parsed.requestId === "string" && parsed.working === true) {
      this.stillWorking(parsed.requestId);
      return;
    }
    if (!isObject(parsed) || typeof parsed.requestId !== "string" || !isHolderReply(parsed.reply)) {
      this.onError(new Error("malformed holder reply"));
      return;
    }
    this.settle(parsed.requestId, parsed.reply); // a late reply (after timeout) finds nothing: ignored
  }

  /** The holder still works on a request: its wait starts again. */
  private stillWorking(requestId: string): void {
    const pending = this.pending.get(requestId);
    if (pending === undefined) return;
    clearTimeout(pending.timer);
    pending.timer = setTimeout(() => this.settle(requestId, undefined), pending.timeoutMs);
  }

  private async onRequest(message: string, handler: (command: HolderCommand) => Promise<HolderReply>): Promise<void> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch (error) {
      this.onError(new Error("unreadable holder request", { cause: error }));
      return;
    }
    if (!isObject(parsed) || typeof parsed.requestId !== "string" || typeof parsed.replyTo !== "string") {
      this.onError(new Error("malformed holder request"));
      return;
    }
    const { requestId, replyTo } = parsed;
    let reply: HolderReply;
    if (!isHolderCommand(parsed.command)) {
      reply = { ok: false, error: { code: ErrorCode.InvalidParams, message: "Malformed holder command" } };
    } else {
      const heartbeat = setInterval(() => {
        if (!this.closed) void this.publishTo(replyTo, { requestId, working: true }, "a holder heartbeat");
      }, this.heartbeatMs);
      try {
        reply = await handler(parsed.command);
      } catch (error) {
        reply = { ok: false, error: { code: ErrorCode.InternalError, message: error instanceof Error ? error.message : String(error) } };
      } finally {
        clearInterval(heartbeat);
      }
    }
    if (this.closed) return; // shutting down: the sender times out, as with a dead holder
    await this.publishTo(replyTo, { requestId, reply }, "a holder reply");
  }

  private async publishTo(replyTo: string, message: JsonObject, what: string): Promise<void> {
    try {
      await this.publisher.publish(replyChannelOf(this.prefix, replyTo), JSON.stringify(message));
    } catch (error) {
      this.onError(new Error(`publishing ${what} failed`, { cause: error }));
    }
  }
}
