// A FAKE 2025-11-25 server that is busy but alive in a way no real server is on demand (named as
// such in the tests that use it): it never answers ping, nor takes a notifications/cancelled (the
// POST hangs, as on a server too busy to read it), while its one tool, `ticker`, streams a
// progress notification every `everyMs` (SSE on the call's own POST) and its result after `ms`.
// It never answers completion/complete either (too busy to suggest). Plain JSON for everything
// else, no standalone stream (GET 405). `sessions` counts the initializes (one per upstream session
// taskgate opened); `pings` the pings it left unanswered, `cancels` the cancels, `calls` the
// tools/calls, `lastTickerToken` whether the last one carried a progressToken; nextDelete() resolves
// when taskgate next closes a session (DELETE).

import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { listenOnLoopback } from "./loopbackHttp.js";

export interface LatePingServer {
  url: string;
  sessions: number;
  pings: number;
  cancels: number;
  /** tools/call requests received. */
  calls: number;
  /** Whether the last ticker call asked for progress (carried a progressToken). */
  lastTickerToken: { asked: boolean } | undefined;
  /** Resolves at the next DELETE (a session taskgate closed). */
  nextDelete(): Promise<void>;
  close(): Promise<void>;
}

type Message = { jsonrpc: "2.0"; id?: string | number; method?: string; params?: Record<string, unknown> };

const TICKER = {
  name: "ticker",
  description: "Streams progress every everyMs, answers after ms",
  inputSchema: { type: "object", properties: { ms: { type: "number" }, everyMs: { type: "number" } } },
};

export async function startLatePingServer(): Promise<LatePingServer> {
  const timers = new Set<NodeJS.Timeout>();
  const state = { sessions: 0, pings: 0, cancels: 0, calls: 0 };
  let lastTickerToken: { asked: boolean } | undefined;
  const deleteWaiters: Array<() => void> = [];
  const json = (res: ServerResponse, body: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(200, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));

  const ticker = (message: Message, res: ServerResponse) => {
    const args = (message.params?.arguments ?? {}) as { ms?: number; everyMs?: number };
    const token = (message.params?._meta as { progressToken?: unknown } | undefined)?.progressToken;
    lastTickerToken = { asked: token !== undefined };
    res.writeHead(200, { "content-type": "text/event-stream" });
    const send = (body: unknown) => res.write(`event: message\ndata: ${JSON.stringify(body)}\n\n`);
    let ticks = 0;
    const tick = setInterval(() => {
      ticks++;
      if (token !== undefined)
        send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: ticks } });
    }, args.everyMs ?? 100);
    const done = setTimeout(() => {
      clearInterval(tick);
      send({ jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: `ticked ${ticks}` }] } });
      res.end();
    }, args.ms ?? 1_000);
    timers.add(tick).add(done);
    res.on("close", () => {
      clearInterval(tick);
      clearTimeout(done);
    });
  };

  const answer = (req: IncomingMessage, res: ServerResponse, message: Message) => {
    if (message.method === "initialize") {
      state.sessions++;
      const result = {
        protocolVersion: "2025-11-25",
        capabilities: { tools: {}, completions: {} },
        serverInfo: { name: "late-ping-fake", version: "1" },
      };
      return json(res, { jsonrpc: "2.0", id: message.id, result }, { "mcp-session-id": randomUUID() });
    }
    if (message.method === "notifications/cancelled") {
      state.cancels++;
      return; // never taken: the POST hangs until taskgate gives up on it
    }
    if (message.id === undefined) return res.writeHead(202).end(); // other notifications
    if (message.method === "ping") {
      state.pings++;
      return; // never answered: the request hangs until taskgate gives up on it
    }
    if (message.method === "completion/complete") return; // never answered either
    if (message.method === "tools/list") return json(res, { jsonrpc: "2.0", id: message.id, result: { tools: [TICKER] } });
    if (message.method === "tools/call") {
      state.calls++;
      return ticker(message, res);
    }
    return json(res, { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } });
  };

  const http = await listenOnLoopback((req, res) => {
    if (req.method === "DELETE") {
      for (const wake of deleteWaiters.splice(0)) wake();
      return res.writeHead(200).end();
    }
    if (req.method !== "POST") return res.writeHead(405).end();
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => answer(req, res, JSON.parse(Buffer.concat(chunks).toString("utf8")) as Message));
  });
  return {
    url: http.url,
    get sessions() {
      return state.sessions;
    },
    get pings() {
      return state.pings;
    },
    get cancels() {
      return state.cancels;
    },
    get calls() {
      return state.calls;
    },
    get lastTickerToken() {
      return lastTickerToken;
    },
    nextDelete: () => new Promise<void>((resolve) => deleteWaiters.push(resolve)),
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      await http.close();
    },
  };
}
