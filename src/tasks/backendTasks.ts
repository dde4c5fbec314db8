// The tasks a modern backend makes itself, relayed and owned. A CreateTaskResult from the backend
// reaches the client with its id wrapped (RelayedTaskIds: sealed with the owner), so only the
// identity that created it can use it; tasks/get, tasks/update and tasks/cancel with such an id are
// opened (another owner's, or a forged one: "Task not found", as for an unknown id) and sent to the
// backend with the backend's id and the owner's credentials, and the answers come back with the id
// wrapped again. Only the Task fields of the extension's schema are passed on (a backend's stray
// fields, such as an SDK's empty `content`, are not).

import { invalidParams, RpcError } from "../protocol/errors.js";
import { type JsonObject, META, PROTOCOL_VERSION, TASKS_EXTENSION } from "../protocol/wire.js";
import type { ModernLink } from "../upstream/modernLink.js";
import { UpstreamFailure } from "../upstream/upstreamFailure.js";
import { isObject } from "../util/json.js";
import { RelayedTaskIds } from "./relayedTaskIds.js";

const TASK_FIELDS = [
  "taskId",
  "status",
  "statusMessage",
  "createdAt",
  "lastUpdatedAt",
  "ttlMs",
  "pollIntervalMs",
  "inputRequests",
  "result",
  "error",
] as const;

export interface BackendTasksDeps {
  link: ModernLink;
  ids: RelayedTaskIds;
  /** The headers of `owner`'s requests to the backend (its credentials). */
  headersFor(owner: string): Record<string, string>;
}

/** The `_meta` of taskgate's own task requests for an owner (a listen stream's polls). */
export const TASKS_META: JsonObject = {
  [META.protocolVersion]: PROTOCOL_VERSION,
  [META.clientCapabilities]: { extensions: { [TASKS_EXTENSION]: {} } },
  [META.clientInfo]: { name: "taskgate", version: "0.1.0" },
};

const notFound = () => invalidParams("Task not found (unknown, expired, or not yours)");

export class BackendTasks {
  constructor(private readonly deps: BackendTasksDeps) {}

  static isRelayed(taskId: string): boolean {
    return RelayedTaskIds.isRelayed(taskId);
  }

  /** The backend's CreateTaskResult as the owner gets it: the Task fields, its id wrapped. */
  created(owner: string, result: JsonObject): JsonObject {
    const task = this.taskFields(owner, result);
    return { ...task, resultType: "task", ...(isObject(result._meta) ? { _meta: result._meta } : {}) };
  }

  /** tasks/get for `owner`: the backend's DetailedTask with the wrapped id. */
  async get(owner: string, taskId: string, meta: JsonObject = TASKS_META): Promise<JsonObject> {
    const result = await this.send(owner, "tasks/get", taskId, {}, meta);
    return { ...this.taskFields(owner, result), resultType: "complete" };
  }

  async update(owner: string, taskId: string, inputResponses: JsonObject, meta: JsonObject): Promise<void> {
    await this.send(owner, "tasks/update", taskId, { inputResponses }, meta);
  }

  async cancel(owner: string, taskId: string, meta: JsonObject): Promise<void> {
    await this.send(owner, "tasks/cancel", taskId, {}, meta);
  }

  private taskFields(owner: string, result: JsonObject): JsonObject {
    if (typeof result.taskId !== "string") {
      throw new UpstreamFailure("upstream_not_mcp", "the backend answered with a task that has no taskId");
    }
    const task: JsonObject = {};
    for (const field of TASK_FIELDS) if (result[field] !== undefined) task[field] = result[field];
    task.taskId = this.deps.ids.wrap({ backendTaskId: result.taskId, owner });
    return task;
  }

  private async send(owner: string, method: string, taskId: string, params: JsonObject, meta: JsonObject): Promise<JsonObject> {
    const task = this.deps.ids.open(taskId, owner);
    if (!task) throw notFound();
    const { link } = this.deps;
    const { message, httpStatus } = await link.send({
      id: link.nextId(),
      method,
      params: { ...params, taskId: task.backendTaskId, _meta: meta },
      headers: this.deps.headersFor(owner),
      // taskgate's own polls (a listen stream following the task) carry TASKS_META; a client's request its own _meta.
      untraced: meta === TASKS_META,
    });
    if (isObject(message.error)) {
      throw RpcError.from(message.error as { code: number; message: string; data?: unknown }, httpStatus);
    }
    return isObject(message.result) ? message.result : {};
  }
}
