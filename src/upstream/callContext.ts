// CallContext: what the upstream session needs of a call that can be asked something — where its
// questions and log messages go. A session routes a server→client request to the context of the
// call it belongs to (see UpstreamSession), never to a guess.

import type { InputRequest, JsonObject } from "../protocol/wire.js";

export interface LogEntry {
  level: string;
  logger?: string;
  data: unknown;
}

export interface CallContext {
  /** Answer a question the upstream asked during this call. Rejects to send an error upstream. `inferred`: it came
   *  outside the call's stream and is given to this call only because it was the one call in flight (the server
   *  may have asked it on its own, e.g. server-everything's roots/list after a session opens). */
  onInput(request: InputRequest, withdrawn: AbortSignal, inferred: boolean): Promise<JsonObject>;
  /** A log message the upstream sent during this call. */
  onLog?(entry: LogEntry): void;
  /** The client wants this call's log messages: its result waits a moment for late ones. */
  relaysLogs?: boolean;
}
