// A throwaway redis-server on a free loopback port (no persistence), for store faults: SIGSTOP
// (connections stay open, nothing is answered), SIGCONT, and stop (connections refused). The
// shared Redis on 6379 is never touched.

import { freePort } from "./freePort.js";
import { ManagedProcess } from "./managedProcess.js";

export class RedisProcess {
  private constructor(
    readonly port: number,
    private readonly process: ManagedProcess,
  ) {}

  static async start(): Promise<RedisProcess> {
    const port = await freePort();
    const process = await ManagedProcess.start({
      name: `redis-server on port ${port}`,
      command: "redis-server",
      args: ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      ready: /Ready to accept connections/,
    });
    return new RedisProcess(port, process);
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** SIGSTOP: the port still accepts connections; no command is answered. */
  pause(): void {
    this.process.pause();
  }

  resume(): void {
    this.process.resume();
  }

  isRunning(): boolean {
    return this.process.isRunning();
  }

  /** SIGTERM (SIGKILL after 5 s): afterwards connections to the port are refused. */
  stop(): Promise<void> {
    return this.process.stop("SIGTERM");
  }

  close(): Promise<void> {
    return this.process.stop("SIGKILL");
  }
}
