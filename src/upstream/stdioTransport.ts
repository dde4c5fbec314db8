// StdioTransport: one legacy session over one server process's stdin/stdout (a stdio server
// serves one client per process, so session and process are the same thing). The process starts
// with the session's first message (initialize) and is stopped with the session. A stdio wire has
// no per-request stream: everything the server sends arrives as `standalone`, so a question is
// attributable only to the one call in flight on the process (or, with upstream.sessionsPer
// "capabilities", the asking call holding it alone); while several run it is refused (UpstreamSession).
// A process that ends by itself closes the session with an upstream_exited failure naming its exit
// code or signal and its last stderr line.

import type { ServerProcess } from "./serverProcess.js";
import type { StdioProcesses } from "./stdioProcesses.js";
import type { Exchange, JsonRpcMessage, TransportReceiver, UpstreamTransport } from "./transport.js";
import { UpstreamFailure } from "./upstreamFailure.js";

export interface StdioTransportOptions {
  processes: StdioProcesses;
  /** The session's capability profile, for the process's log lines. */
  profile: string;
  /** A message the process does not take within this long fails (upstream.requestTimeoutMs). */
  sendTimeoutMs: number;
}

const STANDALONE = { kind: "standalone" } as const;

export class StdioTransport implements UpstreamTransport {
  receiver?: TransportReceiver;
  readonly sessionId = undefined;
  private server?: Promise<ServerProcess>;
  private process?: ServerProcess;
  private closed = false;

  constructor(private readonly options: StdioTransportOptions) {}

  get target(): string {
    return this.options.processes.target;
  }

  sendRequest(message: JsonRpcMessage, exchange: Exchange): void {
    // A running process is written to by callback (a call's request makes no promise here).
    const running = this.process;
    if (running && !this.closed) {
      return running.write(message, this.options.sendTimeoutMs, (error) => {
        if (error) exchange.fail(error);
      });
    }
    this.send(message).catch((error: unknown) => exchange.fail(error instanceof Error ? error : new Error(String(error))));
  }

  send(message: JsonRpcMessage): Promise<void> {
    // A running process is written to at once (no promise awaited for it on every message).
    const running = this.process;
    if (running && !this.closed) return running.send(message, this.options.sendTimeoutMs);
    return this.started().then((server) => server.send(message, this.options.sendTimeoutMs));
  }

  /** stdout is the standalone channel, open from the start. */
  async opened(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Stopped at once when running (it stops counting against upstream.maxProcesses right away:
    // the session evicted to make room must not hold the place of the one that needs it).
    if (this.process) return this.process.stop();
    const server = await this.server?.catch(() => undefined);
    await server?.stop();
  }

  private started(): Promise<ServerProcess> {
    if (this.closed) return Promise.reject(new UpstreamFailure("session_gone", "the upstream session was closed"));
    this.server ??= this.options.processes.start(this.options.profile).then((server) => {
      this.process = server;
      server.events = {
        message: (message) => this.receiver?.message(message, STANDALONE),
        exited: (failure) => this.receiver?.closed(failure),
      };
      if (this.closed) void server.stop();
      return server;
    });
    return this.server;
  }
}
