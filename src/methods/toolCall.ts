// tools/call, the heart of taskgate: checks the params, the tool against the upstream's catalog
// and its Mcp-Param-* headers, chooses the tool's policy, and opens the call at the call owner
// (calls/callDesk.ts), which starts it upstream at once and answers inline or with a task.
// Policy `auto` waits autoAfterMs: a result is answered inline; a call still running becomes a
// task; a question is asked inline first (MRTR), and the retry that answers it gets the task
// (the call goes on as one: the conformance suite's "MRTR before task creation").

import { ownerHashOf } from "../auth/identity.js";
import type { CallDesk } from "../calls/callDesk.js";
import { invalidParams } from "../protocol/errors.js";
import { checkParamHeaders } from "../protocol/paramHeaders.js";
import type { Reply } from "../protocol/reply.js";
import type { JsonObject } from "../protocol/wire.js";
import { profileOf } from "../upstream/capabilityProfile.js";
import type { UpstreamCatalog } from "../upstream/upstreamCatalog.js";
import { isObject } from "../util/json.js";
import type { MethodRequest } from "./handler.js";

export function toolCallHandler(desk: CallDesk, catalog: UpstreamCatalog) {
  return async (request: MethodRequest): Promise<Reply> => {
    const { name, arguments: args } = request.params;
    if (typeof name !== "string" || name.length === 0) throw invalidParams("params.name must be the tool name (a non-empty string)");
    if (args !== undefined && !isObject(args)) throw invalidParams("params.arguments must be an object");
    request.note.tool = name;
    const owner = ownerHashOf(request.identity);
    const facts = await catalog.describe(owner, profileOf(request.capabilities), name);
    if (!facts.known) throw invalidParams(`Unknown tool: '${name}' is not in the upstream's tools/list`);
    const headerProblem = facts.paramHeaders && checkParamHeaders(request.headers, facts.paramHeaders, args);
    if (headerProblem) throw headerProblem;
    // Legacy `params.task`, MRTR fields and all modern _meta are deliberately not forwarded.
    const upstreamParams: JsonObject = { name, ...(args !== undefined ? { arguments: args } : {}) };
    return desk.open(request, {
      owner,
      method: "tools/call",
      name,
      args,
      upstreamParams,
      policy: desk.policyFor(name, facts.taskSupport),
      taskSupport: facts.taskSupport,
    });
  };
}
