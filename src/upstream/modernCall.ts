// A call taskgate runs itself on a modern (2026-07-28) backend: the way an UpstreamCall runs
// (a CallRunner) when taskgate, not the backend, makes the task, or answers inline for a call the
// call owner holds. It sends the request with the caller's own `_meta` (so the backend asks only
// what the caller declared) minus the tasks extension (so the backend answers it as a call, not a
// task of its own) and, when someone reads the progress, a progress token of taskgate's (the
// progress goes to the call's holders); an `input_required` round becomes Questions for the
// holders (the task's inputRequests, or taskgate's own MRTR round), and once every one is answered
// the request is sent again with the answers and the backend's requestState, byte for byte.
// Stopping the call closes the exchange, which is how 2026-07-28 cancels. At most MAX_ROUNDS rounds.

import { type InputRequest, type JsonObject, META, TASKS_EXTENSION } from "../protocol/wire.js";
import { isObject } from "../util/json.js";
import type { ModernLink } from "./modernLink.js";
import type { CallRun, CallRunner } from "./upstreamCall.js";
import { CallStopped, UpstreamFailure, UpstreamRpcError } from "./upstreamFailure.js";

const MAX_ROUNDS = 16;

export interface ModernCallStart {
  method: string;
  /** The request's params as the caller sent them (without _meta, inputResponses, requestState). */
  params: JsonObject;
  /** The caller's `_meta`. */
  meta: JsonObject;
  /** Credentials and the caller's Mcp-Param-* headers, read per round (a refreshed token is used at once). */
  headers: () => Record<string, string>;
  /** The backend is asked for progress (a token of taskgate's): someone reads it. */
  asksProgress: boolean;
}

/** The caller's _meta as the backend gets it from taskgate: its capabilities without the tasks extension, and
 *  taskgate's progressToken instead of the caller's (none when nobody reads the progress). */
export function metaForCall(meta: JsonObject, progressToken: string | undefined): JsonObject {
  const { progressToken: _theirs, ...rest } = meta;
  const declared = rest[META.clientCapabilities];
  const caps: JsonObject = isObject(declared) ? declared : {};
  const extensions = isObject(caps.extensions) ? { ...caps.extensions } : undefined;
  if (extensions) delete extensions[TASKS_EXTENSION];
  const { extensions: _all, ...others } = caps;
  const capabilities = extensions && Object.keys(extensions).length > 0 ? { ...others, extensions } : others;
  const forBackend: JsonObject = { ...rest, [META.clientCapabilities]: capabilities };
  if (progressToken !== undefined) forBackend.progressToken = progressToken;
  return forBackend;
}

export function modernCallRunner(link: ModernLink, start: ModernCallStart): CallRunner {
  return async (run) => {
    const meta = metaForCall(start.meta, start.asksProgress ? link.nextId() : undefined);
    let answers: JsonObject = {};
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const result = await oneRound(link, start, { ...start.params, ...answers, _meta: meta }, run);
      if (result.resultType !== "input_required") return resultOf(result);
      const inputResponses = await askHolders(result.inputRequests, run);
      answers = { inputResponses, ...(typeof result.requestState === "string" ? { requestState: result.requestState } : {}) };
    }
    throw new UpstreamFailure("upstream_lost", `Upstream call lost: the backend asked more than ${MAX_ROUNDS} rounds of questions`);
  };
}

async function oneRound(link: ModernLink, start: ModernCallStart, params: JsonObject, run: CallRun): Promise<JsonObject> {
  const exchange = link.exchange({
    id: link.nextId(),
    method: start.method,
    params,
    headers: start.headers(),
    signal: run.signal,
    long: true,
  });
  for await (const { message } of exchange) {
    if (message.method === "notifications/progress" && isObject(message.params)) {
      const { progress, total, message: said } = message.params;
      if (typeof progress === "number") {
        run.onprogress({
          progress,
          ...(typeof total === "number" ? { total } : {}),
          ...(typeof said === "string" ? { message: said } : {}),
        });
      }
      continue;
    }
    if (message.method === "notifications/message" && isObject(message.params)) {
      const { level, logger, data } = message.params;
      run.context.onLog?.({ level: String(level), ...(typeof logger === "string" ? { logger } : {}), data });
      continue;
    }
    if (message.method !== undefined) continue;
    if (isObject(message.error)) throw new UpstreamRpcError(message.error as { code: number; message: string });
    if (isObject(message.result)) return message.result;
  }
  throw new CallStopped(String(run.signal.reason ?? "stopped"));
}

/** Every question of one round asked at once; all must be answered before the next round. */
async function askHolders(requests: unknown, run: CallRun): Promise<JsonObject> {
  if (!isObject(requests) || Object.keys(requests).length === 0) return {};
  const entries = await Promise.all(
    Object.entries(requests).map(async ([key, request]) => {
      const answer = await run.context.onInput(request as unknown as InputRequest, run.signal, false);
      return [key, answer] as const;
    }),
  );
  return Object.fromEntries(entries);
}

/** The call's result as a legacy call's would be: resultType and the backend's serverInfo are the front door's to set. */
function resultOf(result: JsonObject): JsonObject {
  if (result.resultType === "task") {
    throw new UpstreamFailure("upstream_not_mcp", "the backend answered with a task to a request that did not declare the tasks extension");
  }
  const { resultType: _type, ...rest } = result;
  return rest;
}
