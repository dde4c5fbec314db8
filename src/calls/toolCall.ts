// tools/call, the heart of taskgate: starts the upstream call at once, then decides, per the
// tool's policy and whether THIS request declared the tasks extension, to answer inline or to
// hand out a task (written to the store before the handle goes out).

import type { Config } from "../config/schema.js";
import { invalidParams, missingCapability } from "../protocol/errors.js";
import { declaresTasks, TASKS_EXTENSION, type JsonObject } from "../protocol/wire.js";
import type { TaskManager } from "../tasks/taskManager.js";
import { taskHandle } from "../tasks/taskView.js";
import { profileOf } from "../upstream/capabilityProfile.js";
import type { UpstreamPool } from "../upstream/upstreamPool.js";
import { STREAMED, type HandlerResult, type RequestContext } from "../methods/context.js";
import { respondInline } from "./inlineResponder.js";
import { policyFor } from "./taskPolicy.js";
import { UpstreamCall } from "./upstreamCall.js";
import type { UpstreamCatalog } from "../upstream/upstreamCatalog.js";
import { ownerHashOf } from "../auth/identity.js";
import { checkParamHeaders } from "../http/paramHeaders.js";
import type { HeldCalls } from "./heldCalls.js";
import { argumentsDigest } from "./requestStateCodec.js";
import { isRetry, presetAnswersOf, resumeHeldCall } from "./resumeHeldCall.js";

export interface ToolCallDeps {
  pool: UpstreamPool;
  catalog: UpstreamCatalog;
  tasks: TaskManager;
  heldCalls: HeldCalls;
  config: Config;
}

/** A quick result within this window is answered as JSON, not SSE. */
export const INLINE_JSON_WINDOW_MS = 250;

export function toolCallHandler(deps: ToolCallDeps) {
  return async (ctx: RequestContext): Promise<HandlerResult> => {
    const { name, arguments: args } = ctx.params;
    if (typeof name !== "string" || name.length === 0) throw invalidParams("params.name must be the tool name (a non-empty string)");
    if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args))) {
      throw invalidParams("params.arguments must be an object");
    }
    ctx.note.tool = name;
    const configuredKey = deps.config.tasks.inputKeys[name];
    const binding = {
      owner: ownerHashOf(ctx.identity),
      method: "tools/call",
      name,
      args: argumentsDigest(args),
      ...(configuredKey ? { configuredKey } : {}),
    };
    const facts = await deps.catalog.describe(name);
    if (facts && !facts.known) throw invalidParams(`Unknown tool: '${name}' is not in the upstream's tools/list`);
    const headerProblem = facts?.paramHeaders && checkParamHeaders(ctx.req.headers, facts.paramHeaders, args as JsonObject | undefined);
    if (headerProblem) throw headerProblem;
    if (isRetry(ctx.params)) return resumeHeldCall(ctx, deps.heldCalls, binding, { jsonWindowMs: INLINE_JSON_WINDOW_MS });

    const presetAnswers = presetAnswersOf(ctx.params);
    const declared = declaresTasks(ctx.capabilities);
    const policy = policyFor(name, deps.config.tasks, facts?.taskSupport);
    if (!declared && policy === "required") {
      throw missingCapability({ extensions: { [TASKS_EXTENSION]: {} } }, `tool '${name}' runs only as a task; declare ${TASKS_EXTENSION}`);
    }

    // Legacy `params.task`, MRTR fields and all modern _meta are deliberately not forwarded.
    const upstreamParams: JsonObject = { name, ...(args !== undefined ? { arguments: args } : {}) };
    const call = new UpstreamCall(deps.pool, profileOf(ctx.capabilities), "tools/call", upstreamParams, ctx.log);
    const progressToken = ctx.meta.progressToken as string | number | undefined;
    const inline = () =>
      respondInline(call, {
        id: ctx.id,
        ...(progressToken !== undefined ? { progressToken } : {}),
        res: ctx.res,
        jsonWindowMs: INLINE_JSON_WINDOW_MS,
        note: ctx.note,
        capabilities: ctx.capabilities,
        heldCalls: deps.heldCalls,
        binding,
        ...(presetAnswers ? { presetAnswers } : {}),
      });

    if (!declared || policy === "never") return inline();
    if (policy === "auto") {
      const first = await Promise.race([
        call.outcome.then(() => "finished" as const),
        call.asked.then(() => "asked" as const),
        new Promise<"slow">((resolve) => setTimeout(() => resolve("slow"), deps.config.tasks.autoAfterMs).unref()),
      ]);
      if (first === "finished") return inline();
      if (ctx.res.destroyed) {
        // The caller left while we waited: nobody would ever learn this task's id.
        call.abort("client left before the task was handed out");
        ctx.note.outcome = "client_disconnected";
        return STREAMED;
      }
    }
    let record;
    try {
      record = await deps.tasks.start(call, ctx.identity, name);
    } catch (error) {
      call.abort("the task could not be stored");
      throw error;
    }
    ctx.note.taskId = record.taskId;
    ctx.note.outcome = "task";
    return { ...taskHandle(record), resultType: "task" };
  };
}
