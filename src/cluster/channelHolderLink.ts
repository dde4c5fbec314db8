// ChannelHolderLink: the HolderLink's request/reply over any message transport (Redis pub/sub,
// PostgreSQL LISTEN/NOTIFY). serve() takes the commands addressed to this instance, { requestId,
// replyTo, command }, and sends back { requestId, reply } to `replyTo`, and { requestId, working:
// true } every heartbeatMs while its handler runs. send() resolves the reply, or undefined when
// nothing came for timeoutMs (each sign of work starts that wait again) or at once when the
// transport knows nobody serves the holder (it is gone). A throwing handler replies -32603.
// A command the holder asks about first (asksFirst: a `resume`) carries `confirmWithinMs`: the
// holder replies { requestId, ready: true } and carries it out only once { requestId, go: true }
// comes back to its own channel within that time. A sender that already gave up sends no go, so
// a holder that wakes from a pause drops what its sender stopped waiting for. A request without
// `confirmWithinMs` (an older sender) is carried out at once, as before.

import { randomUUID } from "node:crypto";
import { ErrorCode } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/wire.js";
import { isObject } from "../util/json.js";
import { asksFirst, HOLDER_SILENCE_MS, type HolderCommand, type HolderLink, type HolderReply, type SendOptions } from "./holderLink.js";

/** How a ChannelHolderLink's messages travel. Replies to this link go to the onReply given at connect. */
export interface LinkTransport {
  /** Sends a request to whoever serves `instanceId`; false when the transport knows nobody does. */
  request(instanceId: string, message: string): Promise<boolean>;
  reply(replyTo: string, message: string): Promise<void>;
  /** Starts delivering the requests addressed to this instance. */
  serve(onRequest: (message: string) => void): Promise<void>;
  close(): Promise<void>;
}

export const DEFAULT_HEARTBEAT_MS = 1_000;

/** Told to the link's onError when a holder drops a command its sender no longer waited for (not a transport fault). */
export class CommandDropped extends Error {
  constructor(
    readonly command: string,
    readonly waitedMs: number,
  ) {
    super(`dropped ${command}: its sender did not say it still waits within ${waitedMs} ms`);
  }
}

/** The longest a holder waits for a sender's go, whatever the request says (a bad value must not hold a command long). */
const CONFIRM_MAX_MS = 60_000;

/** A link whose transport is opened by `open` with the link's reply handler (replies cannot come before anything is sent). */
export async function connectChannelLink(
  instanceId: string,
  open: (replyTo: string, onReply: (message: string) => void) => Promise<LinkTransport>,
  onError: (error: Error) => void,
  heartbeatMs = DEFAULT_HEARTBEAT_MS,
): Promise<ChannelHolderLink> {
  const replyTo = `${instanceId}:${randomUUID()}`;
  let link: ChannelHolderLink | undefined;
  const transport = await open(replyTo, (message) => link?.onReply(message));
  link = new ChannelHolderLink(transport, replyTo, onError, heartbeatMs);
  return link;
}

interface Pending {
  resolve(reply: HolderReply | undefined): void;
  timer: NodeJS.Timeout;
  timeoutMs: number;
  holder: string;
  onTaken?: (() => void) | undefined;
}

function isHolderCommand(value: unknown): value is HolderCommand {
  if (!isObject(value) || typeof value.ownerHash !== "string") return false;
  switch (value.kind) {
    case "cancel":
      return typeof value.taskId === "string";
    case "fail":
      return typeof value.taskId === "string" && typeof value.reason === "string";
    case "update":
      return typeof value.taskId === "string" && isObject(value.responses);
    case "resume":
      return (
        ["requestState", "method", "name", "args"].every((key) => typeof value[key] === "string") &&
        isObject(value.inputResponses) &&
        isObject(value.capabilities) &&
        typeof value.asTask === "boolean" &&
        (value.endpoint === undefined || typeof value.endpoint === "string") &&
        (value.retryId === undefined || typeof value.retryId === "string")
      );
    case "leave":
      return typeof value.requestState === "string" && (value.retryId === undefined || typeof value.retryId === "string");
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

export class ChannelHolderLink implements HolderLink {
  private readonly pending = new Map<string, Pending>();
  /** Holder side: commands waiting for their sender's go, by requestId. */
  private readonly awaitingGo = new Map<string, (go: boolean) => void>();
  private serving = false;
  private closed = false;

  /** Call `transport` first with `onReply` wired to this link's onReply (see connectChannelLink). */
  constructor(
    private readonly transport: LinkTransport,
    /** Unique per link (not just per instance id), so replies never reach a stale namesake. */
    private readonly replyTo: string,
    private readonly onError: (error: Error) => void,
    private readonly heartbeatMs: number,
  ) {}

  async serve(handler: (command: HolderCommand) => Promise<HolderReply>): Promise<void> {
    if (this.closed) throw new Error("holder link is closed");
    if (this.serving) throw new Error("holder link is already serving");
    this.serving = true;
    await this.transport.serve((message: string) => {
      void this.onRequest(message, handler);
    });
  }

  async send(holder: string, command: HolderCommand, options: SendOptions = {}): Promise<HolderReply | undefined> {
    if (this.closed) return undefined;
    const { timeoutMs = HOLDER_SILENCE_MS, onTaken } = options;
    const requestId = randomUUID();
    const answer = new Promise<HolderReply | undefined>((resolve) => {
      const timer = setTimeout(() => this.settle(requestId, undefined), timeoutMs);
      this.pending.set(requestId, { resolve, timer, timeoutMs, holder, onTaken });
    });
    const confirm = asksFirst(command) ? { confirmWithinMs: timeoutMs } : {};
    try {
      const served = await this.transport.request(holder, JSON.stringify({ requestId, replyTo: this.replyTo, command, ...confirm }));
      if (!served) this.settle(requestId, undefined); // nobody serves that instance
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
    for (const go of [...this.awaitingGo.values()]) go(false);
    await this.transport.close();
  }

  private settle(requestId: string, reply: HolderReply | undefined): void {
    const pending = this.pending.get(requestId);
    if (pending === undefined) return;
    this.pending.delete(requestId);
    clearTimeout(pending.timer);
    pending.resolve(reply);
  }

  /** A message that arrived on this link's reply channel. */
  onReply(message: string): void {
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
    if (isObject(parsed) && typeof parsed.requestId === "string" && parsed.ready === true) {
      this.goAhead(parsed.requestId);
      return;
    }
    if (!isObject(parsed) || typeof parsed.requestId !== "string" || !isHolderReply(parsed.reply)) {
      this.onError(new Error("malformed holder reply"));
      return;
    }
    this.settle(parsed.requestId, parsed.reply); // a late reply (after timeout) finds nothing: ignored
  }

  /** The holder asks whether this link still waits for a request: if it does, it says go (and waits again); if it gave
   *  up, it says nothing and the holder drops the command. */
  private goAhead(requestId: string): void {
    const pending = this.pending.get(requestId);
    if (pending === undefined) return;
    this.stillWorking(requestId);
    pending.onTaken?.();
    const go = JSON.stringify({ requestId, go: true });
    this.transport.request(pending.holder, go).catch((error: unknown) => {
      this.onError(new Error(`sending go to ${pending.holder} failed`, { cause: error }));
    });
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
    if (isObject(parsed) && typeof parsed.requestId === "string" && parsed.go === true) {
      this.awaitingGo.get(parsed.requestId)?.(true);
      return;
    }
    if (!isObject(parsed) || typeof parsed.requestId !== "string" || typeof parsed.replyTo !== "string") {
      this.onError(new Error("malformed holder request"));
      return;
    }
    const { requestId, replyTo, confirmWithinMs } = parsed;
    let reply: HolderReply;
    if (!isHolderCommand(parsed.command)) {
      reply = { ok: false, error: { code: ErrorCode.InvalidParams, message: "Malformed holder command" } };
    } else if (typeof confirmWithinMs === "number" && !(await this.sentGo(requestId, replyTo, confirmWithinMs))) {
      // Its sender gave up before it came (this holder was paused, or the link slow): carrying it out now would act for
      // nobody. Said to a sender that still listens, and to the operator.
      const dropped = new CommandDropped(describe(parsed.command), confirmWithinMs);
      this.onError(dropped);
      reply = { ok: false, error: { code: ErrorCode.InternalError, message: dropped.message } };
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

  /** Holder side: asks the sender whether it still waits; true once its go came within `withinMs`. */
  private sentGo(requestId: string, replyTo: string, withinMs: number): Promise<boolean> {
    const limit = Number.isFinite(withinMs) ? Math.min(Math.max(withinMs, 0), CONFIRM_MAX_MS) : 0;
    return new Promise<boolean>((resolve) => {
      const settle = (go: boolean) => {
        clearTimeout(timer);
        this.awaitingGo.delete(requestId);
        resolve(go);
      };
      const timer = setTimeout(() => settle(false), limit);
      this.awaitingGo.set(requestId, settle);
      void this.publishTo(replyTo, { requestId, ready: true }, "a holder's question to its sender");
    });
  }

  private async publishTo(replyTo: string, message: JsonObject, what: string): Promise<void> {
    try {
      await this.transport.reply(replyTo, JSON.stringify(message));
    } catch (error) {
      this.onError(new Error(`publishing ${what} failed`, { cause: error }));
    }
  }
}
