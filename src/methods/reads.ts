// prompts/get and resources/read: relayed like the other reads, but opened as inline calls at the
// call owner (calls/callDesk.ts), because MRTR lets these two ask the client questions too
// (input_required rounds). Never a task. resources/read results carry the cache hints; a
// retry's result is never cached.

import type { UpstreamAccess } from "../access/upstreamAccess.js";
import { ownerHashOf } from "../auth/identity.js";
import type { CallDesk } from "../calls/callDesk.js";
import { invalidParams } from "../protocol/errors.js";
import type { Reply } from "../protocol/reply.js";
import type { JsonObject } from "../protocol/wire.js";
import type { MethodRequest } from "./handler.js";
import type { CacheHints } from "./relay.js";

export function readHandler(desk: CallDesk, cache: CacheHints, policy: UpstreamAccess) {
  return async (request: MethodRequest): Promise<Reply> => {
    const nameKey = request.method === "resources/read" ? "uri" : "name";
    const name = request.params[nameKey];
    if (typeof name !== "string" || name.length === 0) throw invalidParams(`params.${nameKey} must be a non-empty string`);
    request.note[nameKey] = name;
    // Hidden from this caller: answered in the words an SDK server uses for a name it does not have.
    if (!policy.allows(request.identity, nameKey === "uri" ? "resources" : "prompts", name)) {
      throw invalidParams(nameKey === "uri" ? `Resource ${name} not found` : `Prompt ${name} not found`);
    }
    const args = request.method === "prompts/get" ? request.params.arguments : undefined;
    const upstreamParams: JsonObject = { [nameKey]: name, ...(args !== undefined ? { arguments: args } : {}) };
    return desk.open(request, {
      owner: ownerHashOf(request.identity),
      method: request.method,
      name,
      args,
      upstreamParams,
      policy: "never",
      ...(request.method === "resources/read" ? { cache } : {}),
    });
  };
}
