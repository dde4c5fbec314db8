// ServerProcess: one running stdio MCP server. JSON-RPC messages go to its stdin and come from its
// stdout, one JSON message per line (the SDK's framing: serializeMessage out, and lines read as the
// SDK's ReadBuffer does, without its schema parse of every message: the HTTP side does not pay one
// either, and an answer is passed on as it came). Every
// stderr line is logged with the pid and session label; the last one is kept, so that when the
// process exits on its own the failure says how (exit code or signal) and what it said last.
// stop() closes stdin, waits stopGraceMs, then signals the whole process group (SIGTERM, then
// SIGKILL after another stopGraceMs): what the server started itself goes with it.

import type { ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { STDIO_DEFAULT_MAX_BUFFER_SIZE, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Logger } from "pino";
import { Deadlines } from "../util/deadlines.js";
import { isObject } from "../util/json.js";
import { withDeadline } from "../util/timeLimit.js";
import type { JsonRpcMessage } from "./transport.js";
import { UpstreamFailure } from "./upstreamFailure.js";

/** A stderr line longer than this is cut in the log and in failure messages. */
const LINE_MAX = 500;
/** After exit, how long stderr may take to deliver its last lines before the exit is reported. */
const STDERR_FLUSH_MS = 200;
/** A failed write to stdin waits this long for the process's exit (its code and last stderr line say more than EPIPE). */
const EXIT_AFTER_WRITE_FAILURE_MS = 1_000;

export interface ServerProcessEvents {
  message(message: JsonRpcMessage): void;
  /** The process ended without stop() (a crash, or it quit): `failure` says how. */
  exited(failure: UpstreamFailure): void;
}

export class ServerProcess {
  readonly pid: number;
  events?: ServerProcessEvents;
  /** Called once, when the process sent its first message (it started well). */
  onFirstMessage?: () => void;
  private spoke = false;
  private endedByItself = false;
  /** The start of a line not yet ended by a newline. */
  private partial: Buffer | undefined;
  private lastStderr = "";
  private exit?: { code: number | null; signal: NodeJS.Signals | null };
  private stopping = false;
  private readonly ended: Promise<void>;

  constructor(
    private readonly child: ChildProcess,
    /** Names this process's session in log lines. */
    readonly session: string,
    private readonly stopGraceMs: number,
    private readonly log: Logger,
  ) {
    this.pid = child.pid as number;
    // Errors of the process and its pipes are told through its exit (an unhandled one would end taskgate).
    child.on("error", (error) =>
      log.warn({ event: "upstream.process.error", pid: this.pid, session, err: error.message }, "server process error"),
    );
    child.stdin?.on("error", (error) =>
      log.debug({ event: "upstream.stdin.failed", pid: this.pid, session, err: error.message }, "writing to the server process failed"),
    );
    child.stdout?.on("error", () => undefined);
    child.stderr?.on("error", () => undefined);
    child.stdout?.on("data", (chunk: Buffer) => this.read(chunk));
    if (child.stderr) {
      createInterface({ input: child.stderr, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) => this.stderrLine(line));
    }
    const stderrDone = child.stderr ? new Promise<void>((resolve) => child.stderr?.once("close", () => resolve())) : Promise.resolve();
    this.ended = new Promise<void>((resolve) => {
      child.once("exit", (code, signal) => {
        this.exit = { code, signal };
        // The last stderr lines may still be in the pipe: give them a moment, bounded.
        void Promise.race([stderrDone, new Promise((r) => setTimeout(r, STDERR_FLUSH_MS))]).then(() => {
          this.endedByItself = !this.stopping;
          resolve();
          this.exited();
        });
      });
    });
  }

  /** Ended, or being stopped: it no longer counts against upstream.maxProcesses. */
  get isLeaving(): boolean {
    return this.stopping || this.exit !== undefined;
  }

  /** How the process ended, for messages: "exited with code 1" / "was killed by SIGKILL". */
  private describeExit(): string {
    const how = this.exit?.signal ? `was killed by ${this.exit.signal}` : `exited with code ${this.exit?.code ?? "unknown"}`;
    const stderr = this.lastStderr ? `; its last stderr line: ${JSON.stringify(this.lastStderr)}` : " (it wrote nothing on stderr)";
    return `Upstream server process ${this.pid} ${how}${stderr}`;
  }

  /** Resolves once the process ended: true when it ended by itself (not through stop()). */
  whenEnded(): Promise<boolean> {
    return this.ended.then(() => this.endedByItself);
  }

  /** Writes one message to stdin; rejects when the process is gone or does not take it within `timeoutMs`. */
  send(message: JsonRpcMessage, timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => this.write(message, timeoutMs, (error) => (error ? reject(error) : resolve())));
  }

  /** send() by callback (a call's request: no promise of its own): `done` once, with the failure if there was one. */
  write(message: JsonRpcMessage, timeoutMs: number, done: (error?: UpstreamFailure) => void): void {
    const stdin = this.child.stdin;
    if (this.exit || this.stopping || !stdin?.writable) {
      return done(new UpstreamFailure("session_gone", this.exit ? this.describeExit() : "the upstream server process is stopping"));
    }
    let settled = false;
    const settle = (error?: UpstreamFailure) => {
      if (settled) return;
      settled = true;
      done(error);
    };
    // One timer for every write of this length (each one's is almost always met at once).
    const limit = Deadlines.of(timeoutMs).start(() =>
      settle(
        new UpstreamFailure(
          "upstream_timeout",
          `Upstream timed out: server process ${this.pid} did not read its stdin within ${timeoutMs} ms (upstream.requestTimeoutMs)`,
        ),
      ),
    );
    stdin.write(serializeMessage(message as Parameters<typeof serializeMessage>[0]), (error) => {
      limit.cancel();
      if (!error) return settle();
      // The pipe closes as the process exits; its exit is reported a moment later.
      void this.endsWithin(EXIT_AFTER_WRITE_FAILURE_MS).then(() => {
        const gone = this.exit ? this.describeExit() : `Upstream server process ${this.pid} closed its stdin`;
        settle(new UpstreamFailure("upstream_exited", `${gone} (writing to it failed: ${error.message})`));
      });
    });
  }

  /** Ends the process: stdin closed, then SIGTERM and SIGKILL to its group, each after stopGraceMs. */
  async stop(): Promise<void> {
    if (this.stopping) return this.ended;
    this.stopping = true;
    if (this.exit) return;
    this.child.stdin?.end();
    if (await this.endsWithin(this.stopGraceMs)) return;
    this.signal("SIGTERM");
    if (await this.endsWithin(this.stopGraceMs)) return;
    this.log.warn(
      { event: "upstream.process.killed", pid: this.pid, session: this.session },
      "server process ignored stdin closing and SIGTERM: killed",
    );
    this.signal("SIGKILL");
    await this.endsWithin(this.stopGraceMs);
  }

  // --- internals ---------------------------------------------------------------------------

  private read(chunk: Buffer): void {
    let data = this.partial ? Buffer.concat([this.partial, chunk]) : chunk;
    this.partial = undefined;
    for (let end = data.indexOf(10); end !== -1; end = data.indexOf(10)) {
      const line = data.toString("utf8", 0, end > 0 && data[end - 1] === 13 ? end - 1 : end);
      data = data.subarray(end + 1);
      const message = messageOf(line);
      if (typeof message === "string") {
        // A line that is not JSON-RPC (a stray print on stdout): said, and skipped.
        this.log.warn(
          { event: "upstream.stdout.invalid", pid: this.pid, session: this.session, err: message.slice(0, LINE_MAX) },
          "server process wrote a line on stdout that is not a JSON-RPC message",
        );
        continue;
      }
      if (!this.spoke) {
        this.spoke = true;
        this.onFirstMessage?.();
      }
      this.events?.message(message);
    }
    if (data.length === 0) return;
    if (data.length > STDIO_DEFAULT_MAX_BUFFER_SIZE) {
      this.log.warn(
        {
          event: "upstream.stdout.overflow",
          pid: this.pid,
          session: this.session,
          err: `a line past ${STDIO_DEFAULT_MAX_BUFFER_SIZE} bytes`,
        },
        "server process wrote a line too long to read: dropped",
      );
      return;
    }
    this.partial = data;
  }

  private stderrLine(raw: string): void {
    const line = raw.length > LINE_MAX ? `${raw.slice(0, LINE_MAX)}…` : raw;
    if (line.trim() !== "") this.lastStderr = line;
    this.log.info({ event: "upstream.stderr", pid: this.pid, session: this.session, line }, "upstream server stderr");
  }

  private exited(): void {
    if (this.stopping) {
      this.log.debug({ event: "upstream.process.stopped", pid: this.pid, session: this.session }, "server process stopped");
      return;
    }
    this.signal("SIGKILL"); // whatever it started and left behind in its group
    const message = this.describeExit();
    this.log.warn(
      {
        event: "upstream.process.exited",
        pid: this.pid,
        session: this.session,
        code: this.exit?.code,
        signal: this.exit?.signal,
        lastStderr: this.lastStderr || undefined,
      },
      "server process ended by itself",
    );
    this.events?.exited(new UpstreamFailure("upstream_exited", message));
  }

  private signal(signal: NodeJS.Signals): void {
    try {
      // The process group (the server was started detached, leading its own group); else the pid.
      process.kill(process.platform === "win32" ? this.pid : -this.pid, signal);
    } catch {
      // Gone already.
    }
  }

  private endsWithin(ms: number): Promise<boolean> {
    return withDeadline(
      this.ended.then(() => true),
      ms,
      false,
    );
  }
}

/** One stdout line as a JSON-RPC message, or why it is not one. */
function messageOf(line: string): JsonRpcMessage | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return `not JSON: ${(error as Error).message}`;
  }
  if (!isObject(value) || value.jsonrpc !== "2.0") return "not a JSON-RPC 2.0 message";
  if (typeof value.method !== "string" && !("result" in value || "error" in value))
    return "neither a request, a notification nor a response";
  return value as unknown as JsonRpcMessage;
}
