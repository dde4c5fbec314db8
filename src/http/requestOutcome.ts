// What became of one request to the MCP endpoint, in the few words the requests_total metric is
// labelled with (protocol/reasons.ts lists them), read from the request's log note and its
// response once it ended. A reply naming a catalogued reason counts under that reason's outcome,
// whether it was JSON or a stream's last frame. The method label is a method taskgate knows (the
// envelope refused every other one before it was noted) or one of three words, so no caller can
// mint a series.

import { isReason, REASONS, type Reason, type RequestOutcome } from "../protocol/reasons.js";
import type { NotedOutcome, RequestNote } from "../protocol/requestNote.js";

export type { RequestOutcome };

/** Each noted outcome's label; `written`: ok once the reply was written, else disconnected. */
const FROM_NOTE: Record<NotedOutcome, RequestOutcome | "written"> = {
  result: "written",
  task: "task",
  input_required: "input_required",
  tool_error: "tool_error",
  error: "error",
  missing_capability: "error",
  client_disconnected: "disconnected",
  listen: "ok",
  holder_gone: "error",
  refused: "error",
};

/** The method label: the JSON-RPC method, or none (refused before one was read), notification, legacy. */
export function methodLabel(note: RequestNote): string {
  if (typeof note.rpcMethod === "string") return note.rpcMethod;
  if (note.notification !== undefined) return "notification";
  if (note.door === "legacy") return "legacy";
  return "none";
}

/** `finished`: the whole response was written (res.writableFinished when it closed). */
export function requestOutcome(note: RequestNote, status: number, finished: boolean): RequestOutcome {
  if (status >= 500) return "failed";
  if (note.rejected !== undefined) return "rejected";
  if (note.door === "legacy") return status >= 400 ? "error" : "ok";
  if (isReason(note.reason)) return REASONS[note.reason].outcome;
  if (note.error !== undefined) return "error";
  const noted = note.outcome !== undefined && Object.hasOwn(FROM_NOTE, note.outcome) ? FROM_NOTE[note.outcome] : "written";
  if (noted !== "written") return noted;
  return finished ? "ok" : "disconnected";
}

/** The catalogued reason the request's error reply named: a refusal at the door's, or the reply's. */
export function repliedReason(note: RequestNote): Reason | undefined {
  if (isReason(note.rejected)) return note.rejected;
  return isReason(note.reason) ? note.reason : undefined;
}
