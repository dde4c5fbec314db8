// The 2026-07-28 methods in front of a modern backend: relayed (modernRelay.ts) except where
// taskgate adds what the backend lacks.
// - server/discover: taskgate's own, with the backend's capabilities, extensions and instructions
//   merged in (discover.ts), and the tasks extension, which taskgate serves either way.
// - Access rules and approvals as for a legacy backend: hidden tools, prompts and resources are
//   unknown, lists are filtered, and a call that must be approved is run by taskgate behind its gate.
// - tools/call: relayed when the backend offers the tasks extension (it decides about tasks; its
//   tasks come back owned), when the tool's policy is `never`, or when the request did not declare
//   the extension (and the tool is not `required`); otherwise opened at the call owner like a call
//   to a legacy server (the tool's policy: inline, or a task taskgate makes), run on the backend
//   by modernCall.ts.
// - tasks/get|update|cancel: a backend's task (a relayed id) goes to the backend; taskgate's own
//   tasks are answered from its records as always.
// - subscriptions/listen: taskgate's listen streams (relayed task ids followed on the backend).

import type { UpstreamAccess } from "../access/upstreamAccess.js";
import { ownerHashOf } from "../auth/identity.js";
import type { CallDesk } from "../calls/callDesk.js";
import { invalidParams, missingCapability, unknownTool } from "../protocol/errors.js";
import { type Reply, resultReply } from "../protocol/reply.js";
import { declaresTasks, type JsonObject, TASKS_EXTENSION } from "../protocol/wire.js";
import { missingCapabilityFor } from "../questions/declaredKinds.js";
import type { Subscriptions } from "../subscriptions/subscriptions.js";
import { BackendTasks } from "../tasks/backendTasks.js";
import type { TaskAccess } from "../tasks/taskAccess.js";
import { isObject } from "../util/json.js";
import { modernDiscoverResult } from "./discover.js";
import type { MethodHandler, MethodRequest } from "./handler.js";
import { listenHandler } from "./listen.js";
import { type ModernBackend, modernRelayHandler } from "./modernRelay.js";
import type { CacheHints } from "./relay.js";
import { tasksHandlers } from "./tasks.js";
import { APPROVAL_QUESTION } from "./toolCall.js";

export interface ModernParts {
  backend: ModernBackend;
  /** The backend's discover result as last probed. */
  discover(): JsonObject;
  desk: CallDesk;
  access: TaskAccess;
  subscriptions: Subscriptions;
  cache: CacheHints;
  /** The backend's access rules and approvals, applied as for a legacy backend. */
  policy: UpstreamAccess;
}

const RELAYED = ["tools/list", "prompts/list", "prompts/get", "resources/list", "resources/templates/list", "resources/read"];

export function modernHandlers(parts: ModernParts): Record<string, MethodHandler> {
  const relay = modernRelayHandler(parts.backend, parts.policy);
  const own = tasksHandlers(parts.access);
  const handlers: Record<string, MethodHandler> = {
    "server/discover": async () => resultReply(modernDiscoverResult(parts.discover(), parts.cache)),
    "completion/complete": relay,
    "tools/call": toolCall(parts, relay),
    "subscriptions/listen": listenHandler(parts.subscriptions),
    "tasks/get": async (request) => {
      const taskId = relayedId(request);
      if (!taskId) return own["tasks/get"](request);
      return resultReply(await parts.backend.tasks.get(ownerHashOf(request.identity), taskId, metaOf(request)));
    },
    "tasks/update": async (request) => {
      const taskId = relayedId(request);
      if (!taskId) return own["tasks/update"](request);
      const responses = request.params.inputResponses;
      if (!isObject(responses)) throw invalidParams("params.inputResponses must be an object mapping inputRequests keys to answers");
      await parts.backend.tasks.update(ownerHashOf(request.identity), taskId, responses, metaOf(request));
      return resultReply({ resultType: "complete" });
    },
    "tasks/cancel": async (request) => {
      const taskId = relayedId(request);
      if (!taskId) return own["tasks/cancel"](request);
      await parts.backend.tasks.cancel(ownerHashOf(request.identity), taskId, metaOf(request));
      return resultReply({ resultType: "complete" });
    },
  };
  for (const method of RELAYED) handlers[method] = relay;
  return handlers;
}

function toolCall(parts: ModernParts, relay: MethodHandler): MethodHandler {
  return async (request: MethodRequest): Promise<Reply> => {
    const { name, arguments: args } = request.params;
    if (typeof name !== "string" || name.length === 0) throw invalidParams("params.name must be the tool name (a non-empty string)");
    if (args !== undefined && !isObject(args)) throw invalidParams("params.arguments must be an object");
    request.note.tool = name;
    // A tool this caller may not call is answered exactly as an unknown one (as for a legacy backend).
    if (!parts.policy.allows(request.identity, "tools", name)) {
      parts.policy.hiddenCall(request.identity, name, args);
      throw unknownTool(name);
    }
    // A call that must be approved first is run by taskgate (the gate before anything is sent), never relayed.
    const guard = parts.policy.guardFor({ identity: request.identity, tool: name, args });
    const askable = guard?.asksCaller ? missingCapabilityFor(APPROVAL_QUESTION, request.capabilities) : undefined;
    if (askable) throw missingCapability(askable, `tool '${name}' needs your approval before it runs: declare elicitation (form)`);
    const policy = guard?.needsTask ? "required" : parts.desk.policyFor(name, undefined);
    const extensions = parts.discover().capabilities;
    const backendTasks = isObject(extensions) && isObject(extensions.extensions) && isObject(extensions.extensions[TASKS_EXTENSION]);
    const declared = declaresTasks(request.capabilities);
    if (!guard && (backendTasks || policy === "never" || (!declared && policy !== "required"))) return relay(request);
    return parts.desk.open(request, {
      owner: ownerHashOf(request.identity),
      method: "tools/call",
      name,
      args,
      upstreamParams: { name, ...(args !== undefined ? { arguments: args } : {}) },
      policy,
      guard,
    });
  };
}

/** The task id when it is a backend's task (relayed); undefined for taskgate's own. */
function relayedId(request: MethodRequest): string | undefined {
  const { taskId } = request.params;
  if (typeof taskId !== "string" || !BackendTasks.isRelayed(taskId)) return undefined;
  request.note.taskId = taskId;
  return taskId;
}

const metaOf = (request: MethodRequest): JsonObject => request.meta;
