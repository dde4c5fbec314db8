// The cluster side of an instance: the task store, the cluster seams (task bus, instance leases,
// holder link) and the ledger of upstream sessions, for the configured store.kind: memory or file
// (one instance: local seams) or redis (several instances share them). The lease is renewed from
// the start, so other instances see this one alive before it holds anything.

import { resolve } from "node:path";
import type { Logger } from "pino";
import { CommandDropped } from "../cluster/channelHolderLink.js";
import { type Cluster, createCluster } from "../cluster/createCluster.js";
import type { Config } from "../config/schema.js";
import { createTaskStore } from "../tasks/stores/createTaskStore.js";
import { keyvAdapterFor } from "../tasks/stores/keyvAdapter.js";
import type { TaskRecord } from "../tasks/taskRecord.js";
import type { TaskTransition } from "../tasks/taskRecords.js";
import type { TaskStore } from "../tasks/taskStore.js";
import { FileSessionLedger } from "../upstream/fileSessionLedger.js";
import { RedisSessionLedger } from "../upstream/redisSessionLedger.js";
import { NoSessionLedger, type SessionLedger } from "../upstream/sessionLedger.js";
import { withoutPassword } from "../util/safeUrl.js";
import { closeQuietly } from "./closeQuietly.js";

export interface ClusterSide {
  store: TaskStore;
  cluster: Cluster<TaskRecord>;
  ledger: SessionLedger;
  /** Told of every task change this instance writes (filled by the gateway before it serves: notifications). */
  transitions: TaskTransition[];
  close(): Promise<void>;
}

export async function openClusterSide(options: Config["store"], deps: { instanceId: string; log: Logger }): Promise<ClusterSide> {
  const { instanceId, log } = deps;
  const onError = (error: Error) => {
    if (error instanceof CommandDropped) {
      const { command, waitedMs } = error;
      log.info({ event: "holder.command.dropped", command, waitedMs }, "dropped a command its sender no longer waited for");
    } else log.warn({ event: "redis.error", err: error.message || String(error) }, "redis trouble");
  };
  const { store, cluster, ledger } = await openByKind(options, instanceId, onError, log);
  await cluster.leases.start();
  return {
    store,
    cluster,
    ledger,
    transitions: [],
    async close() {
      await closeQuietly(log, "cluster", () => cluster.close()); // this instance's lease goes at once: others see its tasks are gone
      await closeQuietly(log, "session ledger", () => ledger.close());
      await closeQuietly(log, "task store", () => store.close());
    },
  };
}

type Opened = Omit<ClusterSide, "close" | "transitions">;

function openByKind(options: Config["store"], instanceId: string, onError: (error: Error) => void, log: Logger): Promise<Opened> {
  switch (options.kind) {
    case "redis":
      return openShared(options, instanceId, onError, log);
    case "postgres":
      return openPostgres(options, instanceId, onError);
    case "keyv":
      return openKeyv(options, instanceId, onError);
    default:
      return openSingle(options, instanceId, log);
  }
}

/** keyv: any adapter from store.uri, for one instance (local seams). */
async function openKeyv(options: Config["store"], instanceId: string, onError: (error: Error) => void): Promise<Opened> {
  const adapter = await keyvAdapterFor(options.uri ?? "");
  const label = withoutPassword(options.uri ?? "");
  const store = await createTaskStore({ kind: "keyv", adapter, label, commandTimeoutMs: options.commandTimeoutMs, onError });
  return { store, cluster: await createCluster<TaskRecord>({ kind: "local", instanceId }), ledger: new NoSessionLedger() };
}

/** PostgreSQL alone: the store and the cluster seams on one database (no session ledger there yet). */
async function openPostgres(options: Config["store"], instanceId: string, onError: (error: Error) => void): Promise<Opened> {
  const { url, commandTimeoutMs, leaseMs } = options;
  const { openPostgresPool } = await import("../cluster/postgresConnection.js"); // the driver, loaded only for this kind
  const store = await createTaskStore({
    kind: "postgres",
    connect: () => openPostgresPool({ url, commandTimeoutMs, onError }),
    instanceId,
    onError,
  });
  try {
    const cluster = await createCluster<TaskRecord>({ kind: "postgres", url, leaseMs, instanceId, commandTimeoutMs, onError });
    return { store, cluster, ledger: new NoSessionLedger() };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/** memory or file: one instance, local seams. */
async function openSingle(options: Config["store"], instanceId: string, log: Logger): Promise<Opened> {
  const store = await createTaskStore(
    options.kind === "file" ? { kind: "file", path: options.path, writeTimeoutMs: options.commandTimeoutMs } : { kind: "memory" },
  );
  const ledger = options.kind === "file" ? new FileSessionLedger(`${resolve(options.path)}.sessions`, log) : new NoSessionLedger();
  return { store, cluster: await createCluster<TaskRecord>({ kind: "local", instanceId }), ledger };
}

/** redis: the store, the seams and the ledger on Redis; what was opened is closed again if a later part fails. */
async function openShared(options: Config["store"], instanceId: string, onError: (error: Error) => void, log: Logger): Promise<Opened> {
  const { connectRedis, describeRedisUrl } = await import("../cluster/redisConnection.js"); // the driver, loaded only for this kind
  const store = await createTaskStore({
    kind: "redis",
    connect: () =>
      connectRedis({ url: options.url, onError, commandTimeoutMs: options.commandTimeoutMs, reviveAfterMs: options.redisReviveAfterMs }),
    label: describeRedisUrl(options.url),
    prefix: options.prefix,
    instanceId,
    commandTimeoutMs: options.commandTimeoutMs,
  });
  try {
    const cluster = await createCluster<TaskRecord>({
      kind: "redis",
      url: options.url,
      prefix: options.prefix,
      leaseMs: options.leaseMs,
      instanceId,
      onError,
      commandTimeoutMs: options.commandTimeoutMs,
      reviveAfterMs: options.redisReviveAfterMs,
    });
    const ledger = await RedisSessionLedger.open({
      connect: () =>
        connectRedis({ url: options.url, onError, commandTimeoutMs: options.commandTimeoutMs, reviveAfterMs: options.redisReviveAfterMs }),
      prefix: options.prefix,
      instanceId,
      log,
    }).catch(async (error: unknown) => {
      await cluster.close();
      throw error;
    });
    return { store, cluster, ledger };
  } catch (error) {
    await store.close();
    throw error;
  }
}
