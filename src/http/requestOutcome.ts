// What became of one request to the MCP endpoint, in the few words the requests_total metric is
// labelled with, read from the request's log note and its response once it ended. The method
// label is a method taskgate knows (the envelope refused every other one before it was noted) or
// one of three words, so no caller can mint a series.

/**
 * - `ok`: a result (or a notification's 202, a listen stream that ran until the client closed it,
 *   a legacy request the upstream answered below 400)
 * - `tool_error`: the tool's own result with isError
 * - `input_required`: an MRTR round (the client is asked; it retries with the answers)
 * - `task`: tools/call answered with a task
 * - `error`: a JSON-RPC error reply (bad params, unknown tool, the upstream's own error…)
 * - `rejected`: refused at the door (Host/Origin, body size, HTTP method, token, envelope)
 * - `failed`: HTTP 5xx: upstream or store trouble, shutting down, a crash
 * - `disconnected`: the client went away before its reply was written
 */
export type RequestOutcome = "ok" | "tool_error" | "input_required" | "task" | "error" | "rejected" | "failed" | "disconnected";

const FROM_NOTE: Record<string, RequestOutcome> = {
  task: "task",
  input_required: "input_required",
  tool_error: "tool_error",
  error: "error",
  missing_capability: "error",
  client_disconnected: "disconnected",
};

/** The method label: the JSON-RPC method, or none (refused before one was read), notification, legacy. */
export function methodLabel(note: Record<string, unknown>): string {
  if (typeof note.rpcMethod === "string") return note.rpcMethod;
  if (note.notification !== undefined) return "notification";
  if (note.door === "legacy") return "legacy";
  return "none";
}

/** `finished`: the whole response was written (res.writableFinished when it closed). */
export function requestOutcome(note: Record<string, unknown>, status: number, finished: boolean): RequestOutcome {
  if (status >= 500) return "failed";
  if (note.rejected !== undefined) return "rejected";
  if (note.door === "legacy") return status >= 400 ? "error" : "ok";
  if (note.error !== undefined) return "error";
  const noted = typeof note.outcome === "string" && Object.hasOwn(FROM_NOTE, note.outcome) ? FROM_NOTE[note.outcome] : undefined;
  if (noted) return noted;
  // A listen stream ends when its client closes it: that is how it is meant to end.
  if (!finished && note.outcome !== "listen") return "disconnected";
  return "ok";
}
