// taskgate as a child process (`taskgate serve --config <file>`, via gatewayChild.spawnGateway)
// for the faults that need a real process: kill -9, SIGTERM and its exit code. The config is
// written to a JSON file in a temporary directory, so every option (including ones only a config
// file can set) reaches the child. stop() is bounded; close() removes the directory too.

import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JsonObject } from "../../src/protocol/wire.js";
import { killHard, spawnGateway } from "./gatewayChild.js";

export interface GatewayProcess {
  url: string;
  child: ChildProcess;
  /** Its pino lines so far. */
  lines: JsonObject[];
  /** Sends `signal` and resolves with the exit code/signal; rejects if it has not exited within `ms`. */
  stop(signal: NodeJS.Signals, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export class GatewayProcesses {
  private readonly children: ChildProcess[] = [];
  private dir: string | undefined;

  /** A directory for config and store files, removed by close(). */
  async directory(): Promise<string> {
    this.dir ??= await mkdtemp(join(tmpdir(), "taskgate-faults-"));
    return this.dir;
  }

  /** Starts `taskgate serve` with this config (written to `name`.json) and waits until it listens. */
  async start(config: JsonObject, name = "taskgate"): Promise<GatewayProcess> {
    const file = join(await this.directory(), `${name}.json`);
    await writeFile(file, JSON.stringify({ port: 0, auth: { mode: "demo" }, log: { level: "info" }, ...config }, null, 2));
    const started = await spawnGateway(["--config", file], {}, this.children);
    const child = started.process;
    return {
      url: started.url,
      child,
      lines: started.lines,
      stop: (signal, ms) =>
        new Promise((resolve, reject) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode });
          const timer = setTimeout(() => reject(new Error(`taskgate (pid ${child.pid}) did not exit within ${ms} ms of ${signal}`)), ms);
          child.once("exit", (code, exitSignal) => {
            clearTimeout(timer);
            resolve({ code, signal: exitSignal });
          });
          child.kill(signal);
        }),
    };
  }

  async close(): Promise<void> {
    for (const child of this.children.splice(0)) await killHard(child);
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}
