// tools/call, the heart of taskgate: starts the upstream call at once, then decides, per the
// tool's policy and whether THIS request declared the tasks extension, to answer inline (an
// InlineCall) or to hand out a task (written to the store before the handle goes out).
// Policy `auto` waits autoAfterMs: a result is answered inline; a call still running becomes a
// task; a question is asked inline first (MRTR), and the retry that answers it gets the task
// (the call goes on as one: the conformance suite's "MRTR before task creation").

import { ownerHashOf } from "../auth/identity.js";
import type { CallQuotas } from "../calls/callQuotas.js";
import { InlineCall } from "../calls/inlineCall.js";
import type { LiveInlineCalls } from "../calls/liveInlineCalls.js";
import type { CallBinding, ParkedCalls } from "../calls/parkedCalls.js";
import type { RemoteRounds } from "../calls/remoteRounds.js";
import { argumentsDigest } from "../calls/requestStateCodec.js";
import { isRetry, presetAnswersOf, resumeParkedCall } from "../calls/resumeParkedCall.js";
import { startTask } from "../calls/startTask.js";
import { policyFor, type TaskSettings } from "../calls/taskPolicy.js";
import { invalidParams, missingCapability } from "../protocol/errors.js";
import { checkParamHeaders } from "../protocol/paramHeaders.js";
import type { Reply } from "../protocol/reply.js";
import { declaresTasks, type JsonObject, META, TASKS_EXTENSION } from "../protocol/wire.js";
import type { TaskRunner } from "../tasks/taskRunner.js";
import { profileOf } from "../upstream/capabilityProfile.js";
import { type RunningCall, UpstreamCall } from "../upstream/upstreamCall.js";
import type { UpstreamCatalog } from "../upstream/upstreamCatalog.js";
import { toClientError } from "../upstream/upstreamFailure.js";
import type { UpstreamPool } from "../upstream/upstreamPool.js";
import { runsAsUpstreamTask, upstreamRunsToolTasks, upstreamTaskCall } from "../upstream/upstreamTaskCall.js";
import { isObject } from "../util/json.js";
import type { MethodRequest } from "./handler.js";
import { INLINE_JSON_WINDOW_MS, inlineRequestOf } from "./inlineRequest.js";

export interface ToolCallDeps {
  pool: UpstreamPool;
  catalog: UpstreamCatalog;
  runner: TaskRunner;
  parked: ParkedCalls;
  live: LiveInlineCalls;
  /** Retries whose call another instance holds go there. */
  rounds: RemoteRounds;
  quotas: CallQuotas;
  settings: TaskSettings;
}

export function toolCallHandler(deps: ToolCallDeps) {
  /** Creates the task around `call` (stored before the handle is returned). */
  const startTaskFor = (request: MethodRequest, call: RunningCall, owner: string, name: string): Promise<Reply> =>
    startTask(deps.runner, call, { owner, name }, request);

  /** Whether the call runs as a 2025-11-25 task upstream: a task tool, on an upstream that runs tool tasks. */
  const runsUpstreamTask = async (owner: string, taskSupport: string | undefined, callerWantsTask: boolean): Promise<boolean> => {
    if (!runsAsUpstreamTask(taskSupport, callerWantsTask)) return false;
    const info = await deps.pool.info(owner).catch((error: unknown) => {
      throw toClientError(error);
    });
    return upstreamRunsToolTasks(info.capabilities);
  };

  /** Policy `auto`: inline if the call finishes (or asks) within autoAfterMs, else a task. */
  const autoReply = async (request: MethodRequest, inline: InlineCall, call: RunningCall, owner: string, name: string): Promise<Reply> => {
    if (await inline.finishesWithin(deps.settings.autoAfterMs)) return inline.reply(INLINE_JSON_WINDOW_MS);
    return startTaskFor(request, call, owner, name);
  };

  return async (request: MethodRequest): Promise<Reply> => {
    const { name, arguments: args } = request.params;
    if (typeof name !== "string" || name.length === 0) throw invalidParams("params.name must be the tool name (a non-empty string)");
    if (args !== undefined && !isObject(args)) throw invalidParams("params.arguments must be an object");
    request.note.tool = name;
    const configuredKey = deps.settings.inputKeys[name];
    const owner = ownerHashOf(request.identity);
    const binding: CallBinding = {
      owner,
      method: "tools/call",
      name,
      args: argumentsDigest(args),
      ...(configuredKey ? { configuredKey } : {}),
    };
    const profile = profileOf(request.capabilities);
    const facts = await deps.catalog.describe(owner, profile, name).catch((error: unknown) => {
      throw toClientError(error);
    });
    if (!facts.known) throw invalidParams(`Unknown tool: '${name}' is not in the upstream's tools/list`);
    const headerProblem = facts.paramHeaders && checkParamHeaders(request.headers, facts.paramHeaders, args);
    if (headerProblem) throw headerProblem;

    const declared = declaresTasks(request.capabilities);
    const policy = policyFor(name, deps.settings, facts.taskSupport);
    if (isRetry(request.params)) {
      return resumeParkedCall({ ...inlineRequestOf(request), params: request.params }, deps.parked, binding, {
        jsonWindowMs: INLINE_JSON_WINDOW_MS,
        live: deps.live,
        elsewhere: deps.rounds,
        ...(declared && policy === "auto"
          ? {
              respond: (parkedCall) => {
                deps.parked.handOver(parkedCall);
                return startTaskFor(request, parkedCall.call, owner, name);
              },
            }
          : {}),
      });
    }

    const presetAnswers = presetAnswersOf(request.params);
    if (!declared && policy === "required") {
      throw missingCapability({ extensions: { [TASKS_EXTENSION]: {} } }, `tool '${name}' runs only as a task; declare ${TASKS_EXTENSION}`);
    }

    // Legacy `params.task`, MRTR fields and all modern _meta are deliberately not forwarded.
    const upstreamParams: JsonObject = { name, ...(args !== undefined ? { arguments: args } : {}) };
    const target = { pool: deps.pool, owner, profile, relaysLogs: typeof request.meta[META.logLevel] === "string" };
    const onlyTask = declared && (policy === "always" || policy === "required");
    deps.quotas.admit(owner, { task: declared && policy !== "never", held: !onlyTask });
    // A 2025-11-25 task tool is run as a task upstream and followed, whichever way the client is answered.
    const call = (await runsUpstreamTask(owner, facts.taskSupport, declared && policy !== "never"))
      ? upstreamTaskCall(target, upstreamParams, request.log, deps.settings.ttlMs)
      : new UpstreamCall(target, "tools/call", upstreamParams, request.log);
    if (onlyTask) return startTaskFor(request, call, owner, name);
    deps.quotas.track(call, owner, "held");
    const inline = new InlineCall(call, inlineRequestOf(request), {
      parked: deps.parked,
      live: deps.live,
      binding,
      ...(presetAnswers ? { presetAnswers } : {}),
    });
    if (declared && policy === "auto") return autoReply(request, inline, call, owner, name);
    return inline.reply(INLINE_JSON_WINDOW_MS);
  };
}
