// The chaos cluster: a redis-server of its own on a free port (so it can be frozen and restarted
// on the same port), the example legacy server as a child process (HTTP upstream, its events
// recorded), and three taskgate instances on that Redis, each fronting two backends — the legacy
// server at /mcp/legacy and server-everything over stdio at /mcp/everything (one process per
// identity, started by each instance). The balancer is started by the run, in front of them.

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../test/support/ports.js";
import { ManagedProcess } from "../test/support/processes.js";
import { LegacyProcess } from "../test/support/servers/legacyProcess.js";
import { STDIO_COMMANDS } from "../test/support/servers/thirdParty.js";
import type { History } from "./history.js";
import { Instance } from "./instance.js";
import { environmentOf, processesNaming } from "./processes.js";

/** Limits the cluster is configured with; the checker holds answers to them. */
export const LIMITS = {
  leaseMs: 3_000,
  storeCommandTimeoutMs: 2_000,
  upstreamRequestTimeoutMs: 15_000,
  httpRequestTimeoutMs: 30_000,
};

export class RedisServer {
  private process: ManagedProcess | undefined;
  /** `dir`: where its append-only file lives (fsynced on every write), so a restart keeps the tasks. */
  constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.process = await ManagedProcess.start({
      name: `redis-server on port ${this.port}`,
      command: "redis-server",
      args: [
        ...["--port", String(this.port), "--bind", "127.0.0.1", "--dir", this.dir, "--save", ""],
        ...["--appendonly", "yes", "--appendfsync", "always"],
      ],
      ready: /Ready to accept connections/,
    });
  }

  signal(signal: "SIGSTOP" | "SIGCONT"): void {
    if (this.process?.isRunning()) this.process.child.kill(signal);
  }

  /** SIGTERM and start again on the same port: the data comes back from the append-only file. */
  async restart(): Promise<void> {
    await this.process?.stop("SIGTERM");
    await this.start();
  }

  close(): Promise<void> {
    return this.process?.stop("SIGKILL") ?? Promise.resolve();
  }
}

export class Cluster {
  readonly instances: Instance[] = [];
  private dir = "";

  private constructor(
    readonly redis: RedisServer,
    readonly legacy: LegacyProcess,
  ) {}

  /** The path of server-everything's entry point: how its processes are recognised. */
  static readonly everythingMarker = STDIO_COMMANDS.everything()[1]!;
  /** Set in the environment of this cluster's server processes (upstream.env), naming it: other runs and
   *  tests on the machine start server-everything too, and their processes are none of this run's. */
  static readonly clusterVariable = "TASKGATE_CHAOS_CLUSTER";

  static async start(history: History, legacySpeed: number): Promise<Cluster> {
    const dir = await mkdtemp(join(tmpdir(), "taskgate-chaos-"));
    const redis = new RedisServer(await freePort(), dir);
    await redis.start();
    const legacy = await LegacyProcess.start({ speed: legacySpeed });
    for (const event of ["tool-started", "tool-finished", "elicitation-answered", "cancelled"]) {
      legacy.events.on(event, (payload: Record<string, unknown>) => history.add({ kind: "upstream", at: Date.now(), event, payload }));
    }
    const cluster = new Cluster(redis, legacy);
    cluster.dir = dir;
    const prefix = `taskgate-chaos-${process.pid}-${Date.now()}`;
    for (const name of ["a", "b", "c"]) {
      const port = await freePort();
      const file = join(cluster.dir, `${name}.json`);
      await writeFile(file, JSON.stringify(instanceConfig(port, redis.url, prefix, legacy.url, dir), null, 2));
      cluster.instances.push(new Instance(name, port, file, (served) => history.add(served)));
    }
    // One that cannot start fails the run: the parts already up must not outlive it.
    const started = await Promise.allSettled(cluster.instances.map((i) => i.start()));
    const failed = started.find((result) => result.status === "rejected");
    if (failed) {
      await cluster.close();
      throw failed.reason;
    }
    return cluster;
  }

  /** This cluster's server-everything processes now running, each with the taskgate instance that started it (if alive). */
  stdioProcesses(): { pid: number; ppid: number; owner: Instance | undefined }[] {
    return processesNaming(Cluster.everythingMarker)
      .filter((p) => p.cmdline.includes(" stdio") && environmentOf(p.pid)[Cluster.clusterVariable] === this.dir)
      .map((p) => ({ pid: p.pid, ppid: p.ppid, owner: this.instances.find((i) => i.isRunning() && i.pid === p.ppid) }));
  }

  async close(): Promise<void> {
    for (const instance of this.instances) await instance.kill();
    await this.legacy.close();
    await this.redis.close();
    for (const p of this.stdioProcesses()) if (!p.owner) process.kill(p.pid, "SIGKILL");
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }
}

function instanceConfig(port: number, redisUrl: string, prefix: string, legacyUrl: string, cluster: string): Record<string, unknown> {
  const limits = { requestTimeoutMs: LIMITS.upstreamRequestTimeoutMs };
  return {
    host: "127.0.0.1",
    port,
    auth: { mode: "demo" },
    log: { level: "info" },
    shutdown: { graceMs: 0 },
    http: { requestTimeoutMs: LIMITS.httpRequestTimeoutMs },
    store: { kind: "redis", url: redisUrl, prefix, leaseMs: LIMITS.leaseMs, commandTimeoutMs: LIMITS.storeCommandTimeoutMs },
    backends: {
      legacy: { url: legacyUrl, ...limits, tasks: { tools: { build_report: "always", slow_echo: "always" } } },
      everything: {
        command: STDIO_COMMANDS.everything(),
        env: { [Cluster.clusterVariable]: cluster },
        ...limits,
        tasks: { tools: { "trigger-long-running-operation": "always" } },
      },
    },
  };
}
