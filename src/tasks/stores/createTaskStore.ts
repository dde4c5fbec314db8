// createTaskStore: builds the TaskStore for a backend (config store.kind).
// "memory": one process, lost on exit (memoryTaskStore.ts).
// "file": one process, durable: an fsynced append-only journal at `path`, locked against a second
//   process (journalTaskStore.ts; why not SQLite or keyv-file: docs/decisions/0010).
// "redis": shared by the instances on one Redis and prefix; the caller hands over how to connect
//   (redisTaskStore.ts); start fails at once, naming `label`, if Redis cannot be reached.
// "postgres": shared by the instances on one PostgreSQL database (postgresTaskStore.ts); the caller
//   hands over how to connect (the pool's opening checks and migrates the schema).
// "keyv": one process, over any keyv storage adapter (keyvTaskStore.ts; the adapter from store.uri
//   by keyvAdapter.ts).

import type { TaskStore } from "../taskStore.js";
import { type JournalTaskStoreOptions, openJournalTaskStore } from "./journalTaskStore.js";
import type { KeyvTaskStoreOptions } from "./keyvTaskStore.js";
import { MemoryTaskStore, type MemoryTaskStoreOptions } from "./memoryTaskStore.js";
import { openPostgresTaskStore, type PostgresTaskStoreOptions } from "./postgresTaskStore.js";
import { openRedisTaskStore, type RedisTaskStoreOptions } from "./redisTaskStore.js";

export type { RedisClient } from "./redisTaskStore.js";

export type TaskStoreOptions =
  | ({ kind: "memory" } & MemoryTaskStoreOptions)
  | ({ kind: "file" } & JournalTaskStoreOptions)
  | ({ kind: "redis" } & RedisTaskStoreOptions)
  | ({ kind: "postgres" } & PostgresTaskStoreOptions)
  | ({ kind: "keyv" } & KeyvTaskStoreOptions);

export async function createTaskStore(options: TaskStoreOptions): Promise<TaskStore> {
  switch (options.kind) {
    case "memory":
      return new MemoryTaskStore(options);
    case "file":
      return openJournalTaskStore(options);
    case "redis":
      return openRedisTaskStore(options);
    case "postgres":
      return openPostgresTaskStore(options);
    case "keyv":
      // keyv is loaded only by the store that uses it (the Redis and PostgreSQL stores are handed a connection).
      return (await import("./keyvTaskStore.js")).openKeyvTaskStore(options);
  }
}
