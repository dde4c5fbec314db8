// The parent side of the bench processes: spawns a role (bench/roles/*.ts, compiled: see build.ts) as a child
// Node process with an IPC channel, waits for its "ready", and asks it questions (cpu, mem, role
// specific ones). Every wait is bounded and fails naming the role and the question. stderr and
// stdout of each child are kept (last lines, plus a count of Node warnings such as
// MaxListenersExceededWarning) to explain failures and distortions, and all of it in
// BENCH_CHILD_LOG_DIR/<role>-<pid>.log when that is set. stopAll()/killAll() leave no child behind.

import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { join } from "node:path";
import { buildOnce, nodeArgsFor } from "./build.js";

const READY_MS = 30_000;
const ASK_MS = 60_000;
const KEPT_LINES = 40;

export interface CpuUsage {
  user: number;
  system: number;
}

export interface MemUsage {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** Bytes committed to V8's young generation (part of rss). */
  youngGeneration: number;
  afterGc: boolean;
}

export class Child {
  readonly info: Record<string, unknown>;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private readonly lines: string[] = [];
  /** Node process warnings this child printed, by name (e.g. MaxListenersExceededWarning). */
  readonly warnings = new Map<string, number>();
  private exited = false;
  private stopping = false;
  /** How the child ended when nobody asked it to (crash, OOM kill), with its last output. */
  crash: string | undefined;

  constructor(
    readonly name: string,
    readonly process: ChildProcess,
  ) {
    this.info = {};
    const keep = (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line.trim() === "") continue;
        const warning = /\b([A-Z][A-Za-z]+Warning)\b/.exec(line);
        if (warning && /^\(node:\d+\)/.test(line)) this.warnings.set(warning[1]!, (this.warnings.get(warning[1]!) ?? 0) + 1);
        this.lines.push(line.length > 400 ? `${line.slice(0, 400)}…` : line);
        if (this.lines.length > KEPT_LINES) this.lines.shift();
      }
    };
    process.stderr?.on("data", keep);
    process.stdout?.on("data", keep);
    process.on("message", (message: { kind?: string; id?: number; value?: unknown; error?: string }) => {
      if (message?.kind !== "answer" || message.id === undefined) return;
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id);
      clearTimeout(waiting.timer);
      if (message.error !== undefined) waiting.reject(new Error(`${this.name}: ${message.error}`));
      else waiting.resolve(message.value);
    });
    process.on("exit", (code, signal) => {
      this.exited = true;
      if (!this.stopping)
        this.crash = `${this.name} (pid ${process.pid}) exited on its own (${signal ?? `code ${code}`}); its last output:\n${this.tail()}`;
      for (const [id, waiting] of this.pending) {
        clearTimeout(waiting.timer);
        waiting.reject(new Error(`${this.name} exited (${signal ?? code}) before answering; its last output:\n${this.tail()}`));
        this.pending.delete(id);
      }
    });
  }

  get pid(): number {
    return this.process.pid!;
  }

  get alive(): boolean {
    return !this.exited;
  }

  /** The child's last output lines, for error messages. */
  tail(): string {
    return this.lines.length ? this.lines.map((l) => `  | ${l}`).join("\n") : "  | (no output)";
  }

  ask<T>(what: string, args?: unknown, timeoutMs = ASK_MS): Promise<T> {
    if (this.exited) return Promise.reject(new Error(`${this.name} is not running (asked '${what}'); its last output:\n${this.tail()}`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.name} did not answer '${what}' within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.process.send({ kind: "ask", id, what, args });
    });
  }

  cpu(): Promise<CpuUsage> {
    return this.ask<CpuUsage>("cpu");
  }

  mem(): Promise<MemUsage> {
    return this.ask<MemUsage>("mem");
  }

  /** Asks the role to close cleanly; kills it if it does not exit within `ms`. */
  async stop(ms = 15_000): Promise<void> {
    this.stopping = true;
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.process.once("exit", () => resolve()));
    await this.ask("stop", undefined, ms).catch(() => undefined);
    const timer = setTimeout(() => this.process.kill("SIGKILL"), ms);
    await exited;
    clearTimeout(timer);
  }

  kill(): void {
    this.stopping = true;
    if (!this.exited) this.process.kill("SIGKILL");
  }
}

const running = new Set<Child>();
/** Every child spawned since the last takeWarnings(), running or not. */
let spawned: Child[] = [];

export interface SpawnOptions {
  /** Passed to the role as env BENCH_ROLE_ARGS (JSON). */
  args?: unknown;
  /** Run with --expose-gc so "mem" answers after a full GC. */
  exposeGc?: boolean;
  env?: Record<string, string>;
  /** Extra Node flags, e.g. from BENCH_GATEWAY_NODE_FLAGS ("--cpu-prof --cpu-prof-dir=/tmp/prof"). */
  nodeFlags?: string[];
}

/** Starts bench/roles/<file> in its own Node process and resolves once it is ready. */
export async function spawnRole(name: string, file: string, options: SpawnOptions = {}): Promise<Child> {
  buildOnce();
  const execArgv = [...(options.exposeGc ? ["--expose-gc"] : []), ...(options.nodeFlags ?? []), ...nodeArgsFor(join("roles", file))];
  const child = new Child(
    name,
    spawn(process.execPath, execArgv, {
      stdio: ["ignore", "pipe", "pipe", "ipc"],
      env: { ...process.env, ...options.env, BENCH_ROLE_ARGS: JSON.stringify(options.args ?? {}) },
    }),
  );
  running.add(child);
  spawned.push(child);
  const logDir = process.env.BENCH_CHILD_LOG_DIR;
  if (logDir) {
    // Everything the child prints, for profiling runs (--trace-gc and the like).
    const log = createWriteStream(join(logDir, `${name}-${child.pid}.log`));
    child.process.stdout?.pipe(log);
    child.process.stderr?.pipe(log);
  }
  child.process.once("exit", () => running.delete(child));
  const info = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} was not ready within ${READY_MS / 1000} s; its output:\n${child.tail()}`)),
      READY_MS,
    );
    child.process.on("message", (message: { kind?: string; info?: Record<string, unknown> }) => {
      if (message?.kind !== "ready") return;
      clearTimeout(timer);
      resolve(message.info ?? {});
    });
    child.process.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${signal ?? code}) while starting; its output:\n${child.tail()}`));
    });
  });
  Object.assign(child.info, info);
  return child;
}

/** Stops every running child (clean close first, SIGKILL after a bound). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((child) => child.stop()));
}

/** Children that ended without being asked to (since the last takeWarnings()). */
export function crashes(): string[] {
  return spawned.flatMap((child) => (child.crash ? [child.crash] : []));
}

/** Node warnings printed by the children spawned since the last call, as "role: Name ×n" lines. */
export function takeWarnings(): string[] {
  const lines = spawned.flatMap((child) => [...child.warnings].map(([name, count]) => `${child.name}: ${name} ×${count}`));
  spawned = spawned.filter((child) => child.alive);
  for (const child of spawned) child.warnings.clear();
  return lines;
}

/** For the watchdog and fatal paths: SIGKILL everything at once. */
export function killAll(): void {
  for (const child of running) child.kill();
}

/** CPU milliseconds between two cpuUsage() readings. */
export const cpuMs = (before: CpuUsage, after: CpuUsage) => (after.user - before.user + after.system - before.system) / 1000;
