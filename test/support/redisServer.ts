// The tests' Redis: a redis-server of their own on a free 127.0.0.1 port, nothing saved to disk
// (--save "" --appendonly no). testRedis() is the one of this test process (node --test runs each
// file in its own process), started on first use and killed when the process exits; RedisProcess.start()
// is a separate one a fault test can SIGSTOP, SIGCONT and stop. When redis-server is not installed,
// REDIS_SKIP says so and each Redis test is skipped with that reason (`needsRedis` as its options).

import { spawnSync } from "node:child_process";
import { onFreePort } from "./ports.js";
import { ManagedProcess } from "./processes.js";

/** Why the Redis tests cannot run here, or undefined when redis-server is installed. */
export const REDIS_SKIP: string | undefined =
  spawnSync("redis-server", ["--version"], { stdio: "ignore", timeout: 5_000 }).status === 0
    ? undefined
    : "redis-server is not installed (not on PATH); the Redis tests start one of their own on a free port";

/** node:test options for a Redis test or suite: skipped, with REDIS_SKIP as the reason, without redis-server. */
export const needsRedis: { skip?: string } = REDIS_SKIP === undefined ? {} : { skip: REDIS_SKIP };

export class RedisProcess {
  private constructor(
    readonly port: number,
    private process: ManagedProcess,
  ) {}

  static async start(): Promise<RedisProcess> {
    return onFreePort(async (port) => new RedisProcess(port, await RedisProcess.spawn(port)));
  }

  private static spawn(port: number): Promise<ManagedProcess> {
    return ManagedProcess.start({
      name: `redis-server on port ${port}`,
      command: "redis-server",
      args: ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      ready: /Ready to accept connections/,
    });
  }

  /** SIGTERM, then a new redis-server on the same port (empty: nothing is saved). */
  async restart(): Promise<void> {
    await this.process.stop("SIGTERM");
    this.process = await RedisProcess.spawn(this.port);
  }

  /** Lets this test process exit while the server runs (it is killed at exit, see ManagedProcess). */
  unref(): void {
    this.process.unref();
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

let shared: Promise<RedisProcess> | undefined;

/** This test process's own redis-server (started on first call; tests share it under fresh key prefixes). */
export function testRedis(): Promise<RedisProcess> {
  if (REDIS_SKIP !== undefined) return Promise.reject(new Error(REDIS_SKIP));
  shared ??= RedisProcess.start().then((redis) => {
    redis.unref();
    return redis;
  });
  return shared;
}

/**
 * The redis:// url of testRedis(). Without redis-server, a url where nothing listens: every test that
 * uses it carries `needsRedis` and is skipped, and one that forgot fails loudly instead.
 */
export async function testRedisUrl(): Promise<string> {
  return REDIS_SKIP === undefined ? (await testRedis()).url : "redis://127.0.0.1:1";
}
