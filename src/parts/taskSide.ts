// The task side of an instance: task records (store + announcements on the bus), the life of the
// tasks held here (TaskRunner), who may do what with a task (TaskAccess) and the owner of every
// call's life (CallDesk: inline, parked, resumed, task, quotas). Built from the `tasks`, `mrtr` and
// `quotas` options; it serves other instances' commands for the calls held here, and fails the
// tasks a previous process left running.

import type { Logger } from "pino";
import { CallDesk } from "../calls/callDesk.js";
import { upstreamCalls } from "../calls/callStarter.js";
import { ParkedCalls } from "../calls/parkedCalls.js";
import { RequestStateCodec } from "../calls/requestStateCodec.js";
import { isTaskCommand } from "../cluster/holderLink.js";
import type { Config } from "../config/schema.js";
import { TaskAccess } from "../tasks/taskAccess.js";
import { TaskRecords, type TaskRecordsObserver } from "../tasks/taskRecords.js";
import { TaskRunner } from "../tasks/taskRunner.js";
import type { UpstreamPool } from "../upstream/upstreamPool.js";
import type { ClusterSide } from "./clusterSide.js";

export interface TaskSide {
  records: TaskRecords;
  runner: TaskRunner;
  access: TaskAccess;
  desk: CallDesk;
}

export interface TaskSideOptions {
  tasks: Config["tasks"];
  mrtr: Config["mrtr"];
  quotas: Config["quotas"];
}

export interface TaskSideDeps {
  cluster: ClusterSide;
  pool: UpstreamPool;
  instanceId: string;
  metrics: TaskRecordsObserver;
  log: Logger;
}

export async function openTaskSide(options: TaskSideOptions, deps: TaskSideDeps): Promise<TaskSide> {
  const { store, cluster } = deps.cluster;
  const { leases, link } = cluster;
  const { instanceId, log } = deps;
  const records = new TaskRecords(store, cluster.bus, deps.metrics);
  const runner = new TaskRunner({ records, instanceId, settings: options.tasks, log });
  const access = new TaskAccess({ records, runner, instanceId, leases, link, log });
  const desk = new CallDesk({
    startCall: upstreamCalls(deps.pool, options.tasks.ttlMs),
    runner,
    parked: new ParkedCalls(new RequestStateCodec(options.mrtr.secret), options.mrtr.holdTimeoutMs, log, instanceId),
    link,
    quotas: options.quotas,
    settings: options.tasks,
    log,
  });
  // Other instances' commands for the calls held here: tasks' answers and cancels, inline calls' retries.
  await link.serve((command) => (isTaskCommand(command) ? access.onCommand(command) : desk.serve(command)));
  const orphans = await runner.failOrphans();
  if (orphans > 0) log.warn({ event: "tasks.recovered", failed: orphans }, "tasks left running by a previous process were failed");
  return { records, runner, access, desk };
}
