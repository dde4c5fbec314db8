// The example legacy server (examples/legacy-server/main.ts) as a real child process on a fixed
// loopback port, so a test can SIGSTOP, SIGCONT or SIGKILL it and start it again on the same
// port (a restarted upstream that has forgotten every session). Its events (LEGACY_EVENTS=stdout)
// arrive on `events` with the payloads of LegacyServer.events, across restarts.

import { EventEmitter } from "node:events";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { onFreePort } from "../ports.js";
import { ManagedProcess } from "../processes.js";
import { BUILD_ROOT, REPO } from "../repoRoot.js";

export interface LegacyProcessOptions {
  /** Default: a free port. */
  port?: number;
  /** LEGACY_SPEED (delay divisor). Default 1. */
  speed?: number;
  /** 400 = answer unknown session ids like server-everything. Default 404. */
  unknownSessionStatus?: 404 | 400;
  /** Sessions with an event store (resumable streams, like server-everything). */
  resumable?: boolean;
}

/** Node arguments that run the example server of this tree: compiled (npm test) or via tsx. */
function legacyArgs(): string[] {
  const compiled = join(BUILD_ROOT, "examples", "legacy-server", "main.js");
  return existsSync(compiled) ? [compiled] : ["--import", "tsx", join(BUILD_ROOT, "examples", "legacy-server", "main.ts")];
}

export class LegacyProcess {
  readonly events = new EventEmitter();
  private current: ManagedProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly options: LegacyProcessOptions,
  ) {
    this.events.setMaxListeners(100);
  }

  static async start(options: LegacyProcessOptions = {}): Promise<LegacyProcess> {
    const on = async (port: number) => {
      const legacy = new LegacyProcess(port, options);
      await legacy.restart();
      return legacy;
    };
    return options.port === undefined ? onFreePort(on) : on(options.port);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  get process(): ManagedProcess {
    if (!this.current) throw new Error("the example legacy server was never started");
    return this.current;
  }

  /** Starts it (again) on the same port; a previous instance must be gone (see kill()). */
  async restart(): Promise<void> {
    if (this.current?.isRunning()) throw new Error(`the example legacy server (pid ${this.current.pid}) is still running`);
    this.current = await ManagedProcess.start({
      name: "example legacy server",
      command: process.execPath,
      args: legacyArgs(),
      cwd: REPO,
      env: {
        ...process.env,
        LEGACY_PORT: String(this.port),
        LEGACY_HOST: "127.0.0.1",
        LEGACY_SPEED: String(this.options.speed ?? 1),
        LEGACY_UNKNOWN_SESSION_STATUS: String(this.options.unknownSessionStatus ?? 404),
        LEGACY_RESUMABLE: this.options.resumable ? "1" : "0",
        LEGACY_EVENTS: "stdout",
      },
      ready: /example legacy MCP server listening on /,
      onLine: (line) => this.feed(line),
    });
  }

  /** SIGSTOP: connections are still accepted by the kernel, nothing is answered. */
  pause(): void {
    this.process.pause();
  }

  resume(): void {
    this.process.resume();
  }

  /** SIGKILL: every session, stream and running tool is gone at once, no goodbye on the wire. */
  kill(): Promise<void> {
    return this.process.kill();
  }

  /** Ends it whatever its state (cleanup). */
  async close(): Promise<void> {
    await this.current?.stop("SIGKILL");
  }

  /** The next event `name` whose payload matches; rejects after `ms`. Attach before acting. */
  next<T = Record<string, unknown>>(name: string, match: (payload: T) => boolean = () => true, ms = 10_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const listener = (payload: T) => {
        if (!match(payload)) return;
        clearTimeout(timer);
        this.events.off(name, listener);
        resolve(payload);
      };
      const timer = setTimeout(() => {
        this.events.off(name, listener);
        reject(new Error(`the example legacy server sent no '${name}' event within ${ms} ms`));
      }, ms);
      this.events.on(name, listener);
    });
  }

  private feed(line: string): void {
    if (!line.startsWith("{")) return;
    try {
      const { event, ...payload } = JSON.parse(line) as { event?: string };
      if (typeof event === "string") this.events.emit(event, payload);
    } catch {
      // not an event line
    }
  }
}
