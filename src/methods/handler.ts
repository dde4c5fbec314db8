// The method handler contract: a handler gets one validated 2026-07-28 request — its params, who
// is asking, the request headers it may need, and a signal that aborts when the client goes away —
// and returns a Reply (protocol/reply.ts). It may also throw an RpcError, which becomes the error
// reply. Handlers never see the HTTP response: http/replyWriter.ts writes every reply.

import type { Identity } from "../auth/identity.js";
import type { EventLog } from "../observability/requestLog.js";
import type { HeaderMap } from "../protocol/headerValue.js";
import type { Reply } from "../protocol/reply.js";
import type { RequestNote } from "../protocol/requestNote.js";
import type { ClientCapabilities, JsonObject, RequestId } from "../protocol/wire.js";
import type { ClientGone } from "../util/clientGone.js";

export interface MethodRequest {
  id: RequestId;
  method: string;
  params: JsonObject;
  meta: JsonObject;
  capabilities: ClientCapabilities;
  identity: Identity;
  headers: HeaderMap;
  /** Whether the client went away before its reply was written: a listener (onGone), or a signal made on demand. */
  gone: ClientGone;
  /** Lines written here carry the request's requestId and rpcMethod. */
  log: EventLog;
  /** Fields added to the request's log line (tool, taskId, outcome…). */
  note: RequestNote;
  /** The MCP path the request came to, in a fleet (/mcp/<name>, or the federated endpoint). */
  endpoint?: string | undefined;
}

export type MethodHandler = (request: MethodRequest) => Promise<Reply>;
