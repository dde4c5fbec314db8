// HolderLink: how an instance asks the instance holding an upstream call to act on it (only the
// holder can reach the waiting call). For a task: deliver an answer or a cancellation (the holder
// is also the only writer of the task's record). For an inline call parked between MRTR rounds:
// resume it with a retry's answers and reply with the call's next final message (the result, an
// error, or the next round), or leave it when the retrying client went away.
// Single node (LocalHolderLink): there is no other instance.
// Several instances (RedisHolderLink): request/reply over Redis pub/sub; while a handler runs the
// holder says it is still working, so a reply may take as long as the call does, but a holder that
// falls silent is given up within the send's timeout. A `resume` is carried out only once its
// sender says it still waits (the holder asks first): a holder that wakes from a pause must not
// resume a call for a retry whose client was already told the holder did not answer.

import type { JsonObject, JsonRpcErrorObject } from "../protocol/wire.js";

export type TaskCommand =
  | { kind: "update"; taskId: string; ownerHash: string; responses: JsonObject }
  | { kind: "cancel"; taskId: string; ownerHash: string }
  /** An operator fails a stuck task (its upstream call is cancelled); the reason becomes its statusMessage. */
  | { kind: "fail"; taskId: string; ownerHash: string; reason: string };

/** An MRTR retry for a parked inline call; the sender already checked the requestState, the holder checks it again. */
export interface ResumeCommand {
  kind: "resume";
  ownerHash: string;
  requestState: string;
  method: string;
  name: string;
  /** Digest of the retry's arguments. */
  args: string;
  inputResponses: JsonObject;
  /** What the retrying request declared: questions still open are shown only for these kinds. */
  capabilities: JsonObject;
  /** The call goes on as a task on the holder once every question is answered (policy auto). */
  asTask: boolean;
  /** The MCP path the retry came to (a fleet's): a task made of it answers only there. */
  endpoint?: string;
  /** This forwarding of the retry (a leave names it; absent from senders of an earlier version). */
  retryId?: string;
}

/** The client of a forwarded retry went away: the held call is cancelled, as an inline call's would be; a retry the holder
 *  has not resumed yet (it waits for its sender's go) is then not resumed. */
export interface LeaveCommand {
  kind: "leave";
  ownerHash: string;
  requestState: string;
  /** The forwarding it leaves (ResumeCommand.retryId). */
  retryId?: string;
}

export type RoundCommand = ResumeCommand | LeaveCommand;
export type HolderCommand = TaskCommand | RoundCommand;

/** `result`: a resumed call's final result. `httpStatus`: of an error, when not 200. */
export type HolderReply = { ok: true; result?: JsonObject } | { ok: false; error: JsonRpcErrorObject; httpStatus?: number };

/** How long a sender waits for a holder that says nothing (no reply, no heartbeat) before it takes it for gone. */
export const HOLDER_SILENCE_MS = 3_000;

export interface SendOptions {
  /** How long the holder may say nothing (no reply, no sign of work); default HOLDER_SILENCE_MS. */
  timeoutMs?: number;
  /** Told when the holder took a command it asks about first (a `resume`): from then on it may be carried out. */
  onTaken?: () => void;
}

export interface HolderLink {
  /** Serves commands addressed to this instance. */
  serve(handler: (command: HolderCommand) => Promise<HolderReply>): Promise<void>;
  /** undefined when the holder is gone: nobody serves it, or it said nothing (no reply, no sign of
   *  work) for the options' timeoutMs. */
  send(holder: string, command: HolderCommand, options?: SendOptions): Promise<HolderReply | undefined>;
  close(): Promise<void>;
}

/** Commands the holder carries out only once their sender says it still waits for the reply. */
export const asksFirst = (command: HolderCommand): boolean => command.kind === "resume";

export const isTaskCommand = (command: HolderCommand): command is TaskCommand =>
  command.kind === "update" || command.kind === "cancel" || command.kind === "fail";

export class LocalHolderLink implements HolderLink {
  async serve(): Promise<void> {}

  async send(): Promise<HolderReply | undefined> {
    return undefined;
  }

  async close(): Promise<void> {}
}
