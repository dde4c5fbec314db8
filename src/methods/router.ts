// Maps a 2026-07-28 method to its handler, after the gates that come before any work:
// the tasks extension for tasks/* (before the id is looked up), and the upstream's own
// capabilities (a method the upstream cannot serve is not offered: -32601).

import { methodNotFound, missingCapability } from "../protocol/errors.js";
import { declaresTasks, TASKS_EXTENSION, type JsonObject } from "../protocol/wire.js";
import type { HandlerResult, MethodHandler, RequestContext } from "./context.js";

/** Which upstream capability each relayed method needs. */
const NEEDS_UPSTREAM: Record<string, string> = {
  "tools/list": "tools",
  "tools/call": "tools",
  "prompts/list": "prompts",
  "prompts/get": "prompts",
  "resources/list": "resources",
  "resources/templates/list": "resources",
  "resources/read": "resources",
  "completion/complete": "completions",
};

export class MethodRouter {
  constructor(
    private readonly handlers: Record<string, MethodHandler>,
    private readonly upstreamCapabilities: () => Promise<JsonObject>,
  ) {}

  async dispatch(ctx: RequestContext): Promise<HandlerResult> {
    if (ctx.method.startsWith("tasks/") && !declaresTasks(ctx.capabilities)) {
      throw missingCapability({ extensions: { [TASKS_EXTENSION]: {} } }, `${ctx.method} needs the ${TASKS_EXTENSION} extension declared in this request's _meta`);
    }
    const needed = NEEDS_UPSTREAM[ctx.method];
    if (needed && !(await this.upstreamCapabilities())[needed]) {
      throw methodNotFound(ctx.method, `is not offered: the upstream server has no '${needed}' capability`);
    }
    const handler = this.handlers[ctx.method];
    if (!handler) throw methodNotFound(ctx.method);
    return handler(ctx);
  }
}
