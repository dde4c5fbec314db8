// Runs the shared TaskStore contract against every backend createTaskStore() offers: memory, file
// (the journal, in a fresh temp folder; "reopen" opens a copy of the file as it is on disk at that
// moment, as a restarted process would find it, since the first store still holds the file's lock)
// redis (this file's own redis-server on a free port, a fresh random prefix per test; skipped,
// saying why, without redis-server) and postgres (a fresh
// database per test on 127.0.0.1:5432, dropped afterwards; skipped, saying why, when unreachable).
// Backend details live beside it: taskStoreJournal, taskStoreRedis, taskStoreCrash, taskStoreExpiry.

import { copyFile } from "node:fs/promises";
import path from "node:path";
import { openPostgresPool } from "../../src/cluster/postgresConnection.js";
import { createTaskStore } from "../../src/tasks/stores/createTaskStore.js";
import { keyvAdapterFor } from "../../src/tasks/stores/keyvAdapter.js";
import { pushBookFileOf } from "../../src/tasks/stores/pushBookFile.js";
import { freshDatabase, POSTGRES_SKIP } from "../support/postgres.js";
import { REDIS_SKIP, testRedisUrl } from "../support/redisServer.js";
import { connectTo, freshPrefix, tempDir } from "../support/taskStores.js";
import { taskStoreContract } from "./taskStore.contract.js";

const REDIS_URL = await testRedisUrl();

taskStoreContract("memory", async () => ({ store: await createTaskStore({ kind: "memory" }) }), { persistent: false });

taskStoreContract(
  "file",
  async () => {
    const dir = await tempDir("file");
    const file = path.join(dir, "nested", "tasks.json"); // parent folder does not exist yet
    let copies = 0;
    return {
      store: await createTaskStore({ kind: "file", path: file }),
      reopen: async () => {
        const copy = path.join(dir, `reopened-${++copies}.json`);
        await copyFile(file, copy);
        await copyFile(pushBookFileOf(file), pushBookFileOf(copy)).catch(() => undefined); // there once a browser subscribed
        return createTaskStore({ kind: "file", path: copy });
      },
    };
  },
  { persistent: true },
);

const openRedis = (prefix: string, instanceId: string) =>
  createTaskStore({ kind: "redis", connect: connectTo(REDIS_URL), label: REDIS_URL, prefix, instanceId });

taskStoreContract(
  "redis",
  async () => {
    const prefix = freshPrefix();
    return { store: await openRedis(prefix, "instance-a"), reopen: () => openRedis(prefix, "instance-a") };
  },
  { persistent: true, shared: true, skip: REDIS_SKIP },
);

const openPostgres = (url: string, instanceId: string) =>
  createTaskStore({ kind: "postgres", connect: () => openPostgresPool({ url, commandTimeoutMs: 5_000 }), instanceId });

taskStoreContract(
  "postgres",
  async () => {
    const url = await freshDatabase();
    return { store: await openPostgres(url, "instance-a"), reopen: () => openPostgres(url, "instance-a") };
  },
  { persistent: true, shared: true, skip: POSTGRES_SKIP },
);

const openKeyv = async (uri: string, namespace?: string) =>
  createTaskStore({ kind: "keyv", adapter: await keyvAdapterFor(uri), label: uri, ...(namespace ? { namespace } : {}) });

taskStoreContract(
  "keyv over @keyv/postgres",
  async () => {
    const url = await freshDatabase();
    return { store: await openKeyv(url), reopen: () => openKeyv(url) };
  },
  { persistent: true, skip: POSTGRES_SKIP },
);

taskStoreContract(
  "keyv over @keyv/redis",
  async () => {
    const prefix = freshPrefix();
    return { store: await openKeyv(REDIS_URL, prefix), reopen: () => openKeyv(REDIS_URL, prefix) };
  },
  { persistent: true, skip: REDIS_SKIP },
);
