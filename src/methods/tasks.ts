// tasks/get, tasks/update, tasks/cancel for the caller's own tasks. Gated on the tasks
// extension (by the router) before any lookup; params checked before anything changes.

import { ownerHashOf } from "../auth/identity.js";
import { invalidParams } from "../protocol/errors.js";
import { type Reply, resultReply } from "../protocol/reply.js";
import type { TaskAccess } from "../tasks/taskAccess.js";
import { detailedTask } from "../tasks/taskView.js";
import { isObject } from "../util/json.js";
import type { MethodRequest } from "./handler.js";

function taskIdOf(request: MethodRequest): string {
  const { taskId } = request.params;
  if (typeof taskId !== "string" || taskId.length === 0) throw invalidParams("params.taskId must be the task id (a non-empty string)");
  request.note.taskId = taskId;
  return taskId;
}

const ACK: Reply = resultReply({ resultType: "complete" });

export function tasksHandlers(access: TaskAccess) {
  return {
    "tasks/get": async (request: MethodRequest): Promise<Reply> => {
      const record = await access.get(ownerHashOf(request.identity), taskIdOf(request));
      request.note.taskStatus = record.status;
      return resultReply({ ...detailedTask(record), resultType: "complete" });
    },
    "tasks/update": async (request: MethodRequest): Promise<Reply> => {
      const taskId = taskIdOf(request);
      const responses = request.params.inputResponses;
      if (!isObject(responses)) throw invalidParams("params.inputResponses must be an object mapping inputRequests keys to answers");
      await access.update(ownerHashOf(request.identity), taskId, responses, request.log);
      return ACK;
    },
    "tasks/cancel": async (request: MethodRequest): Promise<Reply> => {
      await access.cancel(ownerHashOf(request.identity), taskIdOf(request), request.log);
      return ACK;
    },
  };
}
