// Helpers for the task-store tests: how to start the store child process, fresh temp folders (removed when the file's tests end), a Redis
// connection factory like the gateway's, fresh random key prefixes on the shared Redis (127.0.0.1:6379
// or REDIS_URL; only keys under the prefix are deleted afterwards), and a throwaway redis-server of
// our own on a free loopback port, for tests that must stop Redis (never the shared one).

import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { createClient } from "@redis/client";
import type { RedisClient } from "../../src/tasks/stores/createTaskStore.js";

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/**
 * node arguments that run taskStoreCrash.child.ts with `args`: its compiled .js beside this file when
 * the tests run compiled (npm test, .test-build/), else the .ts through tsx.
 */
export function storeChildArgs(args: string[]): string[] {
  const compiled = import.meta.url.endsWith(".js");
  const child = fileURLToPath(new URL(compiled ? "./taskStoreCrash.child.js" : "./taskStoreCrash.child.ts", import.meta.url));
  return compiled ? [child, ...args] : ["--import", "tsx", child, ...args];
}

// Registered at import, so they run when the importing test file's tests have all ended.
const root = await mkdtemp(path.join(tmpdir(), "taskgate-stores-"));
after(() => rm(root, { recursive: true, force: true }));
after(dropPrefixes);

/** A new empty folder under this test file's temp root. */
export function tempDir(label: string): Promise<string> {
  return mkdtemp(path.join(root, `${label}-`));
}

/** Connects like the gateway does (first connect fails at once), with errors swallowed after. */
export const connectTo = (url: string) => async (): Promise<RedisClient> => {
  const client = createClient({ url, socket: { connectTimeout: 2_000, reconnectStrategy: false } });
  client.on("error", () => undefined);
  await client.connect();
  return client;
};

const prefixes: string[] = [];

/** A fresh random key prefix on the shared Redis; its keys are deleted when the file's tests end. */
export function freshPrefix(): string {
  const prefix = `taskgate-test-${randomUUID()}`;
  prefixes.push(prefix);
  return prefix;
}

async function dropPrefixes(): Promise<void> {
  if (prefixes.length === 0) return;
  const client = createClient({ url: REDIS_URL });
  await client.connect();
  try {
    for (const prefix of prefixes) {
      for await (const keys of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 500 })) {
        if (keys.length > 0) await client.del(keys);
      }
    }
  } finally {
    await client.close();
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ThrowawayRedis {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts redis-server on a free 127.0.0.1 port (nothing saved to disk); gives up after 5 s. */
export async function startThrowawayRedis(): Promise<ThrowawayRedis> {
  const port = await freePort();
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
  const url = `redis://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGCONT");
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
  };
  const deadline = Date.now() + 5_000;
  for (;;) {
    try {
      const client = await connectTo(url)();
      await client.close();
      return { url, process: child, stop };
    } catch (error) {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`throwaway redis-server on port ${port} did not start within 5 s`, { cause: error });
      }
      await sleep(50);
    }
  }
}
