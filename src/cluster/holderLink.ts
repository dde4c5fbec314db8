// HolderLink: how an instance asks the instance holding a task's upstream call to deliver an
// answer or a cancellation (only the holder can reach the waiting call; it is also the only
// writer of the task's record). Single node (LocalHolderLink): there is no other instance.
// Several instances (RedisHolderLink): request/reply over Redis pub/sub.

import type { JsonObject, JsonRpcErrorObject } from "../protocol/wire.js";

export type HolderCommand =
  | { kind: "update"; taskId: string; ownerHash: string; responses: JsonObject }
  | { kind: "cancel"; taskId: string; ownerHash: string };

export type HolderReply = { ok: true } | { ok: false; error: JsonRpcErrorObject };

export interface HolderLink {
  /** Serves commands addressed to this instance. */
  serve(handler: (command: HolderCommand) => Promise<HolderReply>): Promise<void>;
  /** undefined when the holder did not answer within timeoutMs (it is gone). */
  send(holder: string, command: HolderCommand, timeoutMs?: number): Promise<HolderReply | undefined>;
  close(): Promise<void>;
}

export class LocalHolderLink implements HolderLink {
  async serve(): Promise<void> {}

  async send(): Promise<HolderReply | undefined> {
    return undefined;
  }

  async close(): Promise<void> {}
}
