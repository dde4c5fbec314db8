// The bench's own HTTP client (global fetch, which the SDK 1.x client of the "direct" case uses
// too): keep-alive, but an idle socket is dropped after 2 s, well before the servers' 5 s
// keep-alive timeout. Otherwise, on an overloaded machine, a request can be written to a socket
// the server is closing at that moment (ECONNRESET; seen at 5,500 held tasks). undici's
// setGlobalDispatcher is the documented way to configure Node's built-in fetch. Imported for its
// effect, once, by bench/run.ts.

import { Agent, setGlobalDispatcher } from "undici";

export const CLIENT_IDLE_MS = 2000;

setGlobalDispatcher(new Agent({ keepAliveTimeout: CLIENT_IDLE_MS, keepAliveMaxTimeout: CLIENT_IDLE_MS }));
