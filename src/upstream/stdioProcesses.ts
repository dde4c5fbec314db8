// StdioProcesses: starts the configured stdio server (upstream.command), one process per upstream
// session, and keeps count. It promises:
// - at most maxProcesses run at once; at the bound an idle pool session is closed to make room
//   (makeRoom), else the start is refused with upstream_sessions_exhausted (503) naming
//   upstream.maxProcesses;
// - restarts happen on demand (when a session needs a process), with back-off: after a process
//   ended by itself before it said anything, the next start waits 250 ms, doubling up to 10 s, so a
//   server that cannot start is not spawned in a tight loop (the wait counts against the caller's
//   own limit, upstream.initializeTimeoutMs);
// - the server gets HOME, LOGNAME, PATH, SHELL, TERM, USER of taskgate's environment (the SDK's
//   safe list) plus upstream.env, never taskgate's secrets;
// - every process leads a process group of its own, listed with the OrphanGuard, so none
//   outlives taskgate.

import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Logger } from "pino";
import { OrphanGuard } from "./orphanGuard.js";
import { ServerProcess } from "./serverProcess.js";
import { UpstreamFailure } from "./upstreamFailure.js";

export interface StdioServerOptions {
  /** argv: program and its arguments (no shell). */
  command: string[];
  env: Record<string, string>;
  cwd?: string;
  maxProcesses: number;
  stopGraceMs: number;
  log: Logger;
}

const BACKOFF_FIRST_MS = 250;
const BACKOFF_MAX_MS = 10_000;

export class StdioProcesses {
  private readonly running = new Set<ServerProcess>();
  private readonly guard: OrphanGuard;
  /** Processes in a row that ended by themselves before saying anything. */
  private failedStarts = 0;
  private notBefore = 0;
  private closed = false;

  constructor(private readonly options: StdioServerOptions) {
    this.guard = new OrphanGuard(Math.max(1, Math.ceil(options.stopGraceMs / 1000)), options.log);
  }

  /** The command line, for messages and logs. */
  get target(): string {
    return this.options.command.map((word) => (/[\s'"\\]/.test(word) ? JSON.stringify(word) : word)).join(" ");
  }

  get count(): number {
    return this.running.size;
  }

  /** Pids of the processes running now. */
  pids(): number[] {
    return [...this.running].map((process) => process.pid);
  }

  /** Starts one server process for a session described by `profile` (for the log). */
  async start(profile: string): Promise<ServerProcess> {
    if (this.closed) throw new UpstreamFailure("shutting_down", "taskgate is shutting down");
    const wait = this.notBefore - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (this.staying() >= this.options.maxProcesses && !this.makeRoom?.()) {
      throw new UpstreamFailure(
        "upstream_sessions_exhausted",
        `taskgate runs upstream.maxProcesses (${this.options.maxProcesses}) server processes, all in use; ` +
          "retry later or raise upstream.maxProcesses",
      );
    }
    const { command, env, cwd, log, stopGraceMs } = this.options;
    const [program, ...args] = command as [string, ...string[]];
    const child = spawn(program, args, {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...getDefaultEnvironment(), ...env },
      ...(cwd ? { cwd } : {}),
      detached: OrphanGuard.supported,
      windowsHide: true,
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.once("spawn", resolve);
        child.once("error", reject);
      });
    } catch (error) {
      this.startFailed();
      throw new UpstreamFailure(
        "upstream_unreachable",
        `Upstream server could not be started (upstream.command: ${this.target}): ${(error as Error).message}`,
        { cause: error },
      );
    }
    const session = randomUUID().slice(0, 8);
    const server = new ServerProcess(child, session, stopGraceMs, log);
    this.running.add(server);
    if (OrphanGuard.supported) this.guard.watch(server.pid);
    log.info({ event: "upstream.process.started", pid: server.pid, session, profile }, "upstream server process started");
    let spoke = false;
    server.onFirstMessage = () => {
      spoke = true;
      this.failedStarts = 0;
    };
    void server.whenEnded().then((byItself) => {
      this.running.delete(server);
      if (OrphanGuard.supported) this.guard.forget(server.pid);
      if (byItself && !spoke) this.startFailed();
    });
    return server;
  }

  /** At the bound, called once to free a place (the pool closes its least recently used idle
   *  session); true when it did. */
  makeRoom?: () => boolean;

  /** Processes that hold a place: one being stopped is leaving and does not. */
  private staying(): number {
    let count = 0;
    for (const server of this.running) if (!server.isLeaving) count += 1;
    return count;
  }

  /** Stops every process still running; the guard exits. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.running].map((server) => server.stop()));
    this.guard.close();
  }

  private startFailed(): void {
    this.failedStarts += 1;
    this.notBefore = Date.now() + Math.min(BACKOFF_FIRST_MS * 2 ** (this.failedStarts - 1), BACKOFF_MAX_MS);
  }
}
