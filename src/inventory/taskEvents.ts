// The inventory's live events (text/event-stream, `event: task`, data a TaskItem), fed by the task
// bus, so a change made on any instance reaches a stream on any other (Redis, PostgreSQL). One
// task's stream sends its current state first, then every change (older versions than the last
// sent are skipped), and ends once the task is terminal. The caller's stream sends every change of
// any of their tasks until the client leaves. Both carry a keep-alive comment every keepAliveMs.

import type { ServerResponse } from "node:http";
import type { TaskBus } from "../cluster/taskBus.js";
import { SseWriter } from "../http/sseWriter.js";
import { TERMINAL_STATUSES } from "../protocol/wire.js";
import type { TaskRecord } from "../tasks/taskRecord.js";
import { taskItem } from "./taskItem.js";

export interface EventStreamOptions {
  bus: TaskBus<TaskRecord>;
  keepAliveMs: number;
}

/** One task's stream: subscribed before `current` is read, so no change between the two is lost. */
export async function streamTask(
  res: ServerResponse,
  taskId: string,
  current: () => Promise<TaskRecord>,
  options: EventStreamOptions,
): Promise<void> {
  const early: TaskRecord[] = [];
  let sse: SseWriter | undefined;
  let lastVersion = -1;
  const stop = () => {
    unsubscribe();
    sse?.end();
  };
  const send = (record: TaskRecord) => {
    if (!sse || record.version <= lastVersion) return;
    lastVersion = record.version;
    sse.sendEvent("task", taskItem(record));
    if (TERMINAL_STATUSES.has(record.status)) stop();
  };
  const unsubscribe = options.bus.subscribe(taskId, (record) => (sse ? send(record) : early.push(record)));
  res.on("close", () => unsubscribe());
  let record: TaskRecord;
  try {
    record = await current();
  } catch (error) {
    unsubscribe();
    throw error;
  }
  sse = new SseWriter(res, options.keepAliveMs);
  send(record);
  for (const later of early) send(later);
}

/** Every change of the owner's tasks, until the client leaves. */
export function streamOwnerTasks(res: ServerResponse, owner: string, options: EventStreamOptions): void {
  const sse = new SseWriter(res, options.keepAliveMs);
  const unsubscribe = options.bus.subscribeAll((record) => {
    if (record.ownerHash === owner) sse.sendEvent("task", taskItem(record));
  });
  res.on("close", () => {
    unsubscribe();
    sse.end();
  });
  sse.comment("listening");
}
