// The task side of one upstream (the single one, or a backend of a fleet): task records (store +
// announcements on the bus), the life of the tasks held here (TaskRunner), who may do what with a
// task (TaskAccess, scoped to the endpoint in a fleet) and the owner of every call's life
// (CallDesk: inline, parked, resumed, task, quotas). Built from the `tasks`, `mrtr` and `quotas`
// options. What belongs to the instance, not to one upstream, is beside it: serving other
// instances' commands for the calls held here (routed to the side that holds them) and failing the
// tasks a previous process left running.

import type { Logger } from "pino";
import { CallDesk } from "../calls/callDesk.js";
import { directCalls, type ModernCalls, upstreamCalls } from "../calls/callStarter.js";
import { ParkedCalls } from "../calls/parkedCalls.js";
import { RequestStateCodec } from "../calls/requestStateCodec.js";
import { type HolderCommand, type HolderReply, isTaskCommand } from "../cluster/holderLink.js";
import type { Config } from "../config/schema.js";
import { invalidParams } from "../protocol/errors.js";
import { TaskAccess, type TaskHolder } from "../tasks/taskAccess.js";
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
  /** How often held tasks are checked for having been ended by another instance. */
  holderCheckMs: number;
}

export interface TaskSideDeps {
  cluster: ClusterSide;
  pool: UpstreamPool;
  /** A backend that may speak 2026-07-28: calls taskgate runs itself go there while it does. */
  modern?: ModernCalls | undefined;
  instanceId: string;
  metrics: TaskRecordsObserver;
  log: Logger;
  /** In a fleet: the backend (written into its records) and its endpoint (the access's scope). */
  backend?: { name: string; endpoint: string } | undefined;
  /** Where answers and cancels go, when not to this side's own runner (a fleet: whichever backend's runner holds the task). */
  holder?: TaskHolder | undefined;
}

export function openTaskSide(options: TaskSideOptions, deps: TaskSideDeps): TaskSide {
  const { store, cluster } = deps.cluster;
  const { leases, link } = cluster;
  const { instanceId, log, backend } = deps;
  const records = new TaskRecords(store, cluster.bus, deps.metrics, deps.cluster.transitions);
  const runner = new TaskRunner({
    records,
    instanceId,
    settings: options.tasks,
    log,
    backend: backend?.name,
    sweepMs: options.holderCheckMs,
  });
  const access = new TaskAccess({ records, runner: deps.holder ?? runner, instanceId, leases, link, log, endpoint: backend?.endpoint });
  const desk = new CallDesk({
    startCall: upstreamCalls(deps.pool, options.tasks.ttlMs, deps.modern),
    direct: directCalls(deps.pool, deps.modern),
    runner,
    parked: new ParkedCalls(new RequestStateCodec(options.mrtr.secret), options.mrtr.holdTimeoutMs, log, instanceId),
    link,
    holderAlive: (id) => leases.isAlive(id),
    quotas: options.quotas,
    settings: options.tasks,
    log,
  });
  return { records, runner, access, desk };
}

/**
 * Serves other instances' commands for the calls held here, routed to the side that holds them
 * (`sides()` is read per command: a fleet's backends change at reload), then fails the tasks a
 * previous process left running. Once per instance, after the first sides are open.
 */
export async function serveTaskCommands(cluster: ClusterSide, sides: () => readonly TaskSide[], log: Logger): Promise<void> {
  await cluster.cluster.link.serve((command) => routeCommand(command, sides()));
  const [first] = sides();
  const orphans = first ? await first.runner.failOrphans() : 0;
  if (orphans > 0) log.warn({ event: "tasks.recovered", failed: orphans }, "tasks left running by a previous process were failed");
}

function routeCommand(command: HolderCommand, sides: readonly TaskSide[]): Promise<HolderReply> {
  if (isTaskCommand(command)) {
    const side = sides.find((candidate) => candidate.runner.hosts(command.taskId)) ?? sides[0];
    if (side) return side.access.onCommand(command);
  } else {
    const side = sides.find((candidate) => candidate.desk.holds(command.requestState)) ?? sides[0];
    if (side) return side.desk.serve(command);
  }
  return Promise.resolve({ ok: false, error: invalidParams("nothing is held here").toJSON() });
}
