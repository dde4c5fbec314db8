// startTask: a running upstream call becomes a task: its record is stored before the handle is
// returned (a call whose task could not be stored is cancelled upstream). Used by tools/call and by
// a retry forwarded to the instance holding the call (policy auto: the call goes on as a task there).

import type { EventLog } from "../observability/requestLog.js";
import { type Reply, resultReply } from "../protocol/reply.js";
import type { TaskRunner } from "../tasks/taskRunner.js";
import { taskHandle } from "../tasks/taskView.js";
import type { RunningCall } from "../upstream/upstreamCall.js";

export async function startTask(
  runner: TaskRunner,
  call: RunningCall,
  task: { owner: string; name: string },
  request: { log?: EventLog; note: Record<string, unknown> },
): Promise<Reply> {
  let record: Awaited<ReturnType<TaskRunner["start"]>>;
  try {
    record = await runner.start(call, task.owner, task.name, request.log);
  } catch (error) {
    call.abort("the task could not be stored");
    throw error;
  }
  request.note.taskId = record.taskId;
  request.note.outcome = "task";
  return resultReply({ ...taskHandle(record), resultType: "task" });
}
