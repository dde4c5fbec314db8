// Maps a 2026-07-28 method to its handler, after the gates that come before any work:
// the tasks extension for tasks/* (before the id is looked up), and the upstream's own
// capabilities (a method the upstream cannot serve is not offered: -32601). The one place where
// an upstream failure a handler (or a gate) let through becomes its named client error
// (toClientError: the reason, the upstream's own code); anything else thrown passes unchanged.

import { methodNotFound, missingCapability } from "../protocol/errors.js";
import type { Reply } from "../protocol/reply.js";
import { declaresTasks, type JsonObject, TASKS_EXTENSION } from "../protocol/wire.js";
import { CallStopped, toClientError, UpstreamFailure, UpstreamRpcError } from "../upstream/upstreamFailure.js";
import type { MethodHandler, MethodRequest } from "./handler.js";

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
    /** The upstream's capabilities, as seen by the caller (may open the caller's session; known ones are given at once). */
    private readonly upstreamCapabilities: (request: MethodRequest) => JsonObject | Promise<JsonObject>,
  ) {}

  async dispatch(request: MethodRequest): Promise<Reply> {
    try {
      return await this.route(request);
    } catch (error) {
      throw clientErrorOf(error);
    }
  }

  /** dispatch() for a caller that names what was thrown itself, with clientErrorOf() (EraRouter): the handler's own
   *  promise, one hop fewer on every reply's way back. A gate's refusal is thrown at once. */
  routed(request: MethodRequest): Promise<Reply> {
    return this.route(request);
  }

  /** Not async: its throws happen inside dispatch's try, and known capabilities cost no promise of their own. */
  private route(request: MethodRequest): Promise<Reply> {
    if (request.method.startsWith("tasks/") && !declaresTasks(request.capabilities)) {
      throw missingCapability(
        { extensions: { [TASKS_EXTENSION]: {} } },
        `${request.method} needs the ${TASKS_EXTENSION} extension declared in this request's _meta`,
      );
    }
    const needed = NEEDS_UPSTREAM[request.method];
    if (!needed) return this.handle(request);
    const capabilities = this.upstreamCapabilities(request);
    if (capabilities instanceof Promise) return capabilities.then((known) => this.handle(request, needed, known));
    return this.handle(request, needed, capabilities);
  }

  private handle(request: MethodRequest, needed?: string, capabilities?: JsonObject): Promise<Reply> {
    if (needed && !capabilities?.[needed]) {
      throw methodNotFound(request.method, `is not offered: the upstream server has no '${needed}' capability`);
    }
    const handler = Object.hasOwn(this.handlers, request.method) ? this.handlers[request.method] : undefined;
    if (!handler) throw methodNotFound(request.method);
    return handler(request);
  }
}

/** What the upstream layer throws: named for the client by toClientError. */
const isUpstreamError = (error: unknown): boolean =>
  error instanceof UpstreamFailure || error instanceof UpstreamRpcError || error instanceof CallStopped;

/** What a handler or gate threw, as the client gets it: an upstream failure named (toClientError), anything else as it is. */
export const clientErrorOf = (error: unknown): unknown => (isUpstreamError(error) ? toClientError(error) : error);
