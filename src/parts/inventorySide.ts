// The inventory side of an instance: the task inventory's HTTP routes (inventory/), over every
// endpoint's tasks (an access not scoped to one endpoint, whose answers, cancels and fails go to
// whichever backend's runner holds the task, or to its holder instance), the operators' summary
// (tasks by state now and over the last hour, waiting questions oldest first, held calls, upstream
// sessions and processes, live instances), and the notifications' routes when notify/ serves any.

import type express from "express";
import type { Logger } from "pino";
import { metadataUrlFor, resourceIdentifier, resourceMetadataOptions } from "../auth/resourceMetadata.js";
import type { Config } from "../config/schema.js";
import { type InventoryDeps, mountInventory } from "../inventory/inventoryRoutes.js";
import { countByState, StateHistory } from "../inventory/stateCensus.js";
import { adminItem, waitingSince } from "../inventory/taskItem.js";
import type { JsonObject } from "../protocol/wire.js";
import { holderOver, TaskAccess } from "../tasks/taskAccess.js";
import { TaskRecords } from "../tasks/taskRecords.js";
import type { BackendPart } from "./backendPart.js";
import type { ClusterSide } from "./clusterSide.js";
import type { Callers } from "./frontSide.js";

/** How many waiting tasks the summary lists (the newest-created ones waiting, shown oldest-waiting first). */
export const SUMMARY_WAITING_MAX = 200;

export interface InventorySideDeps {
  cluster: ClusterSide;
  callers: Callers;
  /** The upstreams served now (read per request: a fleet's change at reload). */
  parts(): readonly BackendPart[];
  instanceId: string;
  log: Logger;
  /** More routes under the same caller check (notify/'s push subscriptions). */
  more?: InventoryDeps["more"];
  /** quotas.requestsPerMinute's buckets (the MCP endpoint's). */
  rate?: InventoryDeps["rate"];
}

export interface InventorySide {
  mount(app: express.Express): void;
  close(): void;
}

export function openInventorySide(config: Config, deps: InventorySideDeps): InventorySide {
  const { cluster, instanceId } = deps;
  const log = deps.log.child({ part: "inventory" });
  const runnerOf = (taskId: string) => {
    const parts = deps.parts();
    return (parts.find((part) => part.tasks.runner.hosts(taskId)) ?? parts[0])?.tasks.runner;
  };
  const holder = holderOver(runnerOf);
  const { store } = cluster;
  const { bus, leases, link } = cluster.cluster;
  const records = new TaskRecords(store, bus, undefined, cluster.transitions);
  const access = new TaskAccess({ records, runner: holder, instanceId, leases, link, log, anyEndpoint: true });
  const history = new StateHistory(store, log);
  const metadata = resourceMetadataOptions(config.auth);
  const inventory: InventoryDeps = {
    identity: deps.callers.resolver,
    requiredScopes: config.auth.requiredScopes,
    ...(metadata
      ? {
          resourceMetadataUrl: (req) =>
            metadataUrlFor(resourceIdentifier(metadata, `http://${req.headers.host ?? "localhost"}`, config.path)),
        }
      : {}),
    operators: config.inventory.operators,
    allowedOrigins: config.allowedOrigins,
    allowedHosts: config.allowedHosts,
    rate: deps.rate,
    store,
    records,
    access,
    bus,
    keepAliveMs: config.subscriptions.keepAliveMs,
    bodyLimitBytes: config.bodyLimitBytes,
    summary: () => summary(deps, history),
    ...(deps.more ? { more: deps.more } : {}),
    log,
  };
  return {
    mount(app) {
      history.start();
      mountInventory(app, inventory);
    },
    close: () => history.stop(),
  };
}

async function summary(deps: InventorySideDeps, history: StateHistory): Promise<JsonObject> {
  const { store } = deps.cluster;
  const [census, waitingPage, instances] = await Promise.all([
    countByState(store),
    store.listAll({ statuses: ["input_required"], limit: SUMMARY_WAITING_MAX }),
    deps.cluster.cluster.leases.alive(),
  ]);
  const now = Date.now();
  const waiting = waitingPage.records
    .sort((a, b) => (waitingSince(a) ?? now) - (waitingSince(b) ?? now))
    .map((record) => adminItem(record, now));
  const parts = deps.parts();
  return {
    tasksByState: census.byState,
    counted: census.counted,
    complete: census.complete,
    history: history.history() as unknown as JsonObject[],
    waiting,
    heldCalls: parts.reduce((sum, part) => sum + part.tasks.desk.held().parked, 0),
    inlineCalls: parts.reduce((sum, part) => sum + part.tasks.desk.held().inline, 0),
    heldTasks: parts.reduce((sum, part) => sum + part.tasks.runner.count(), 0),
    upstreamSessions: parts.map((part) => ({
      ...(part.name !== undefined ? { backend: part.name } : {}),
      target: part.upstream.target,
      sessions: part.upstream.pool.sessionCount(),
      calls: part.upstream.pool.callCount(),
    })),
    processes: parts.flatMap((part) =>
      (part.upstream.processes?.pids() ?? []).map((pid) => ({ ...(part.name !== undefined ? { backend: part.name } : {}), pid })),
    ),
    instances: instances.map((instance) => ({ ...instance, self: instance.id === deps.instanceId })),
  };
}
