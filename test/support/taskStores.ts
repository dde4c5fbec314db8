// Helpers for the task-store tests: how to start the store child process, fresh temp folders
// (removed when the file's tests end), a Redis connection factory like the gateway's, and fresh
// random key prefixes (the Redis is the test file's own, redisServer.ts, thrown away at the end).

import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after } from "node:test";
import { fileURLToPath } from "node:url";
import { createClient } from "@redis/client";
import type { RedisClient } from "../../src/tasks/stores/createTaskStore.js";

/**
 * node arguments that run taskStoreCrash.child.ts with `args`: its compiled .js beside this file when
 * the tests run compiled (npm test, .test-build/), else the .ts through tsx.
 */
export function storeChildArgs(args: string[]): string[] {
  const compiled = import.meta.url.endsWith(".js");
  const child = fileURLToPath(new URL(compiled ? "../unit/taskStoreCrash.child.js" : "../unit/taskStoreCrash.child.ts", import.meta.url));
  return compiled ? [child, ...args] : ["--import", "tsx", child, ...args];
}

// Registered at import, so they run when the importing test file's tests have all ended.
const root = await mkdtemp(path.join(tmpdir(), "taskgate-stores-"));
after(() => rm(root, { recursive: true, force: true }));

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

/** A fresh random key prefix, so the tests of one file never see each other's keys. */
export function freshPrefix(): string {
  return `taskgate-test-${randomUUID()}`;
}
