// tools/call, the heart of taskgate: checks the params, the tool against the upstream's catalog
// and its Mcp-Param-* headers, chooses the tool's policy, and opens the call at the call owner
// (calls/callDesk.ts), which starts it upstream at once and answers inline or with a task.
// Policy `auto` waits autoAfterMs: a result is answered inline; a call still running becomes a
// task; a question is asked inline first (MRTR), and the retry that answers it gets the task
// (the call goes on as one: the conformance suite's "MRTR before task creation").
// Access rules come first: a tool hidden from the caller is answered as an unknown tool; a call
// that needs approval carries its guard to the call owner (access/callGuard.ts).

import type { UpstreamAccess } from "../access/upstreamAccess.js";
import { ownerHashOf } from "../auth/identity.js";
import type { CallDesk } from "../calls/callDesk.js";
import { invalidParams, missingCapability, unknownTool } from "../protocol/errors.js";
import { checkParamHeaders } from "../protocol/paramHeaders.js";
import type { Reply } from "../protocol/reply.js";
import type { InputRequest, JsonObject } from "../protocol/wire.js";
import { missingCapabilityFor } from "../questions/declaredKinds.js";
import { profileOf } from "../upstream/capabilityProfile.js";
import type { ToolFacts, UpstreamCatalog } from "../upstream/upstreamCatalog.js";
import { isObject } from "../util/json.js";
import type { MethodRequest } from "./handler.js";

/** The kind of question an approval by the caller is (a form elicitation). */
export const APPROVAL_QUESTION: InputRequest = { method: "elicitation/create", params: {} };

export function toolCallHandler(desk: CallDesk, catalog: UpstreamCatalog, policy: UpstreamAccess) {
  // Not async: a known tool is opened without a promise of its own (throws become the router's rejections).
  return (request: MethodRequest): Promise<Reply> => {
    const { name, arguments: args } = request.params;
    if (typeof name !== "string" || name.length === 0) throw invalidParams("params.name must be the tool name (a non-empty string)");
    if (args !== undefined && !isObject(args)) throw invalidParams("params.arguments must be an object");
    request.note.tool = name;
    // A tool this caller may not call is answered exactly as an unknown one: no hint that it exists.
    if (!policy.allows(request.identity, "tools", name)) {
      policy.hiddenCall(request.identity, name, args);
      throw unknownTool(name);
    }
    const owner = ownerHashOf(request.identity);
    const profile = profileOf(request.capabilities);
    const known = catalog.knownNow(profile, name);
    const call: ToolCall = { request, name, args: args as JsonObject | undefined, owner };
    if (known) return open(call, known);
    return catalog.describe(owner, profile, name).then((facts) => open(call, facts));
  };

  function open({ request, name, args, owner }: ToolCall, facts: ToolFacts): Promise<Reply> {
    if (!facts.known) throw unknownTool(name);
    const headerProblem = facts.paramHeaders && checkParamHeaders(request.headers, facts.paramHeaders, args);
    if (headerProblem) throw headerProblem;
    const guard = policy.guardFor({ identity: request.identity, tool: name, args });
    const askable = guard?.asksCaller ? missingCapabilityFor(APPROVAL_QUESTION, request.capabilities) : undefined;
    if (askable) throw missingCapability(askable, `tool '${name}' needs your approval before it runs: declare elicitation (form)`);
    // Legacy `params.task`, MRTR fields and all modern _meta are deliberately not forwarded.
    const upstreamParams: JsonObject = { name, ...(args !== undefined ? { arguments: args } : {}) };
    return desk.open(request, {
      owner,
      method: "tools/call",
      name,
      args,
      upstreamParams,
      // Someone else's approval may take days: such a call runs only as a task.
      policy: guard?.needsTask ? "required" : desk.policyFor(name, facts.taskSupport),
      taskSupport: facts.taskSupport,
      guard,
    });
  }
}

/** A checked tools/call, before its tool's facts are known. */
interface ToolCall {
  request: MethodRequest;
  name: string;
  args: JsonObject | undefined;
  owner: string;
}
