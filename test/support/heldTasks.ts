// Tasks held by another instance, for unit tests of TaskAccess across instances: a running record
// with a given holder, and two instances ("here" and "there") linked over a real Redis (their
// leases and holder link), sharing one memory store of records.

import { randomUUID } from "node:crypto";
import { type Cluster, createCluster } from "../../src/cluster/createCluster.js";
import { createTaskStore } from "../../src/tasks/stores/createTaskStore.js";
import type { TaskRecord } from "../../src/tasks/taskRecord.js";
import { TaskRecords } from "../../src/tasks/taskRecords.js";
import { testRedisUrl } from "./redisServer.js";

/** A `working` task of owner "owner" whose call `holder` holds, last updated `ageMs` ago. */
export function runningTask(taskId: string, holder: string, ageMs = 0): TaskRecord {
  const at = new Date(Date.now() - ageMs).toISOString();
  return { taskId, status: "working", createdAt: at, lastUpdatedAt: at, ttlMs: 60_000, ownerHash: "owner", tool: "t", holder, version: 1 };
}

export interface LinkedInstances {
  here: Cluster<TaskRecord>;
  there: Cluster<TaskRecord>;
  records: TaskRecords;
  close(): Promise<void>;
}

/** "here" and "there" on the test Redis under a fresh prefix (`name`-<uuid>), one memory store of records. */
export async function linkedInstances(name: string): Promise<LinkedInstances> {
  const prefix = `${name}-${randomUUID()}`;
  const url = await testRedisUrl();
  const open = (instanceId: string) =>
    createCluster<TaskRecord>({ kind: "redis", url, prefix, leaseMs: 5_000, instanceId, commandTimeoutMs: 2_000 });
  const here = await open("here");
  const there = await open("there");
  const records = new TaskRecords(await createTaskStore({ kind: "memory" }), here.bus);
  return { here, there, records, close: async () => void (await Promise.all([here.close(), there.close()])) };
}
