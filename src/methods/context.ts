// What every method handler gets: the parsed request, who is asking, and the HTTP exchange
// (for handlers that stream). A handler returns a result to send as JSON, or STREAMED when it
// wrote the response itself.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Identity } from "../auth/identity.js";
import type { ClientCapabilities, JsonObject, RequestId } from "../protocol/wire.js";

export interface RequestContext {
  id: RequestId;
  method: string;
  params: JsonObject;
  meta: JsonObject;
  capabilities: ClientCapabilities;
  identity: Identity;
  req: IncomingMessage;
  res: ServerResponse;
  log: Logger;
  /** Fields added to the request's log line (tool, taskId, outcome…). */
  note: Record<string, unknown>;
}

export const STREAMED = Symbol("streamed");
export type HandlerResult = JsonObject | typeof STREAMED;
export type MethodHandler = (ctx: RequestContext) => Promise<HandlerResult>;
