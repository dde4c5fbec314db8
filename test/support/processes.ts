// The one process launcher of the tests. A child process a test can freeze, thaw, kill and wait for: spawned with piped output,
// ready once a line of its output matches, every wait bounded. A process still running when the
// test process exits is SIGKILLed then (a crashed test leaves nothing behind); SIGSTOPped ones too.

import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface ManagedProcessOptions {
  /** Shown in errors ("redis-server", "example legacy server"). */
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** The output line (stdout or stderr) that says the process is ready. */
  ready: RegExp;
  /** Start-up limit. Default 15 s. */
  startTimeoutMs?: number;
  /** Every line of stdout and stderr, as it arrives. */
  onLine?: (line: string) => void;
  /** Called with the child at once, before it is ready (for callers that keep their own list to kill). */
  onSpawn?: (child: ChildProcess) => void;
  /** Prefix stderr lines with "stderr: " (in onLine and in the printed output). */
  labelStderr?: boolean;
}

const TAIL_LINES = 25;

const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

export class ManagedProcess {
  private output = "";

  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {}

  static start(options: ManagedProcessOptions): Promise<ManagedProcess> {
    const child = spawn(options.command, options.args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.add(child);
    child.once("exit", () => running.delete(child));
    options.onSpawn?.(child);
    const managed = new ManagedProcess(options.name, child);
    const limit = options.startTimeoutMs ?? 15_000;
    const tail = () => managed.output.split("\n").slice(-TAIL_LINES).join("\n").trimEnd() || "(none)";
    return new Promise((resolve, reject) => {
      let ready = false;
      const fail = (message: string) => {
        clearTimeout(timer);
        child.off("close", onEarlyClose);
        // Reaped before the error is reported: a failed start leaves nothing running.
        managed.kill().then(
          () => reject(new Error(message)),
          () => reject(new Error(message)),
        );
      };
      const timer = setTimeout(
        () => fail(`${options.name}: no output line matching ${String(options.ready)} within ${limit} ms; last lines:\n${tail()}`),
        limit,
      );
      const onLine = (line: string) => {
        if (managed.output.length < 100_000) managed.output += `${line}\n`;
        options.onLine?.(line);
        if (!ready && options.ready.test(line)) {
          ready = true;
          clearTimeout(timer);
          child.off("close", onEarlyClose);
          resolve(managed);
        }
      };
      createInterface({ input: child.stdout! }).on("line", onLine);
      createInterface({ input: child.stderr! }).on("line", (line) => onLine(options.labelStderr ? `stderr: ${line}` : line));
      // "close" (not "exit"): by then its last output lines have been read, so the tail is complete.
      const onEarlyClose = (code: number | null, signal: string | null) => {
        clearTimeout(timer);
        reject(new Error(`${options.name} exited before it was ready (code ${code}, signal ${signal}); last lines:\n${tail()}`));
      };
      child.once("close", onEarlyClose);
      child.once("error", (error) => {
        clearTimeout(timer);
        reject(new Error(`${options.name} could not be started: ${error.message}`));
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Lets the test process exit while this one runs (it is SIGKILLed at exit). */
  unref(): void {
    this.child.unref();
    for (const stream of [this.child.stdout, this.child.stderr]) (stream as { unref?: () => void } | null)?.unref?.();
  }

  /** Everything it printed so far (first 100 kB). */
  get printed(): string {
    return this.output;
  }

  isRunning(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGSTOP: the process keeps its sockets (the kernel still accepts connections) but runs nothing. */
  pause(): void {
    this.signal("SIGSTOP");
  }

  /** SIGCONT after pause(). */
  resume(): void {
    this.signal("SIGCONT");
  }

  /** SIGKILL, resolved once it is gone. */
  kill(): Promise<void> {
    return this.stop("SIGKILL", 5_000);
  }

  /** Sends `signal` and waits (at most `ms`) for the exit, then SIGKILLs. Resolves with how it ended. */
  async stop(signal: NodeJS.Signals = "SIGTERM", ms = 5_000): Promise<void> {
    if (!this.isRunning()) return;
    const exited = this.exited(ms);
    if (signal !== "SIGKILL") this.child.kill("SIGCONT"); // a stopped process cannot handle SIGTERM
    this.child.kill(signal);
    try {
      await exited;
    } catch {
      const killed = this.exited(5_000);
      this.child.kill("SIGKILL");
      await killed;
    }
  }

  /** Resolves with the exit code/signal once the process ends; rejects after `ms`. */
  exited(ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (!this.isRunning()) return Promise.resolve({ code: this.child.exitCode, signal: this.child.signalCode });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name} (pid ${this.pid}) did not exit within ${ms} ms`)), ms);
      this.child.once("exit", (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal });
      });
    });
  }

  private signal(signal: NodeJS.Signals): void {
    if (!this.isRunning()) throw new Error(`${this.name} (pid ${this.pid}) is not running; cannot send ${signal}`);
    this.child.kill(signal);
  }
}

/** Whether process `pid` exists (signal 0 only checks). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
