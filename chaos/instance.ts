// One taskgate instance of the chaos cluster: `taskgate serve --config <file>` as a child process
// (the way test/e2e/childGateway.ts runs the CLI: compiled or through tsx) on a fixed loopback
// port, so that after a kill -9 it is restarted on the same port behind the balancer (on another
// when that one was taken while it was down: the balancer reads the instances' ports). Ready once
// its "taskgate listening" line is out; later log lines are only counted (a long run would
// otherwise keep millions of them), and warnings/errors kept as a short tail for the report.
// The request lines of tasks/cancel are told to `onServed` (when each arrived: the checker dates a
// cancel by it, decision 0028). CHAOS_LOG_DIR=dir keeps every line: <dir>/<name>.log (stdout, each start appended) and <name>.stderr.

import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { cliArgs } from "../test/support/gatewayChild.js";
import { freePort } from "../test/support/ports.js";
import { REPO } from "../test/support/repoRoot.js";
import type { ServedRequest } from "./history.js";

/** Start-up on a loaded machine (tsx compiles the sources first) can take long; another try follows. */
const START_MS = 45_000;
/** How taskgate says its port is in use. */
const PORT_TAKEN = /port \d+ is in use/;

export class Instance {
  private child: ChildProcess | undefined;
  lines = 0;
  readonly problems: string[] = [];
  starts = 0;

  constructor(
    readonly name: string,
    public port: number,
    private readonly configFile: string,
    private readonly onServed: (served: ServedRequest) => void = () => {},
  ) {}

  get pid(): number {
    return this.child?.pid ?? -1;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  isRunning(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts it; one that did not come up is killed and started again (three tries in all). */
  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.startOnce();
      } catch (error) {
        if (attempt >= 3) throw error;
        await this.kill();
        // Its port was taken while it was down (another test's server, on a busy machine): it moves.
        if (PORT_TAKEN.test(error instanceof Error ? error.message : String(error))) this.port = await freePort();
      }
    }
  }

  private async startOnce(): Promise<void> {
    if (this.isRunning()) throw new Error(`${this.name} (pid ${this.pid}) is still running`);
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("TASKGATE_")) env[k] = v;
    const child = spawn(process.execPath, cliArgs(["serve", "--config", this.configFile, "--port", String(this.port)]), {
      cwd: REPO,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    this.starts++;
    let stderr = "";
    const logDir = process.env.CHAOS_LOG_DIR;
    if (logDir) {
      mkdirSync(logDir, { recursive: true }); // a folder named for the run need not exist yet
      child.stdout!.pipe(createWriteStream(join(logDir, `${this.name}.log`), { flags: "a" }));
      child.stderr!.pipe(createWriteStream(join(logDir, `${this.name}.stderr`), { flags: "a" }));
    }
    child.stderr!.on("data", (chunk: Buffer) => {
      if (stderr.length < 20_000) stderr += chunk.toString("utf8");
    });
    await new Promise<void>((resolve, reject) => {
      let ready = false;
      const timer = setTimeout(() => reject(new Error(`${this.name} did not start within ${START_MS} ms; stderr: ${stderr}`)), START_MS);
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        if (!ready) reject(new Error(`${this.name} exited before listening (code ${code}, signal ${signal}); stderr: ${stderr}`));
      });
      createInterface({ input: child.stdout! }).on("line", (line) => {
        this.lines++;
        if (!ready && line.includes('"taskgate listening"')) {
          ready = true;
          clearTimeout(timer);
          resolve();
        }
        if (/"level":(50|60)/.test(line)) this.keep(line);
        if (line.includes('"rpcMethod":"tasks/cancel"') && line.includes('"event":"request"')) this.served(line);
      });
    });
  }

  private served(line: string): void {
    const { time, ms, taskId, rpcMethod } = JSON.parse(line) as { time?: unknown; ms?: unknown; taskId?: unknown; rpcMethod?: unknown };
    if (typeof time !== "number" || typeof ms !== "number" || typeof taskId !== "string" || typeof rpcMethod !== "string") return;
    this.onServed({ kind: "served", instance: this.name, method: rpcMethod, taskId, arrived: time - ms });
  }

  private keep(line: string): void {
    this.problems.push(line.slice(0, 400));
    if (this.problems.length > 20) this.problems.shift();
  }

  signal(signal: NodeJS.Signals): void {
    if (this.isRunning()) this.child!.kill(signal);
  }

  /** kill -9, resolved once it is gone. */
  kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.isRunning()) return Promise.resolve();
    return new Promise((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGCONT");
      child.kill("SIGKILL");
    });
  }
}
