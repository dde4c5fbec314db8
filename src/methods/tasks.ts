// tasks/get, tasks/update, tasks/cancel for the caller's own tasks. Gated on the tasks
// extension before any lookup; params checked before anything changes.

import { invalidParams } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/wire.js";
import type { TaskManager } from "../tasks/taskManager.js";
import { detailedTask } from "../tasks/taskView.js";
import type { RequestContext } from "./context.js";

function taskIdOf(ctx: RequestContext): string {
  const { taskId } = ctx.params;
  if (typeof taskId !== "string" || taskId.length === 0) throw invalidParams("params.taskId must be the task id (a non-empty string)");
  ctx.note.taskId = taskId;
  return taskId;
}

export function tasksHandlers(tasks: TaskManager) {
  return {
    "tasks/get": async (ctx: RequestContext): Promise<JsonObject> => {
      const record = await tasks.get(ctx.identity, taskIdOf(ctx));
      ctx.note.taskStatus = record.status;
      return { ...detailedTask(record), resultType: "complete" };
    },
    "tasks/update": async (ctx: RequestContext): Promise<JsonObject> => {
      const taskId = taskIdOf(ctx);
      const responses = ctx.params.inputResponses;
      if (typeof responses !== "object" || responses === null || Array.isArray(responses)) {
        throw invalidParams("params.inputResponses must be an object mapping inputRequests keys to answers");
      }
      await tasks.update(ctx.identity, taskId, responses as JsonObject);
      return { resultType: "complete" };
    },
    "tasks/cancel": async (ctx: RequestContext): Promise<JsonObject> => {
      await tasks.cancel(ctx.identity, taskIdOf(ctx));
      return { resultType: "complete" };
    },
  };
}
