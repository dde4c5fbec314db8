// TaskBus: announces every change of a task record to whoever follows it in this process
// (subscriptions/listen streams). In-process by default; a multi-instance bus would publish
// the same events across instances.

import { EventEmitter } from "node:events";
import type { TaskRecord } from "./taskRecord.js";

export interface TaskBus {
  publish(record: TaskRecord): void;
  subscribe(taskId: string, listener: (record: TaskRecord) => void): () => void;
  listenerCount(taskId: string): number;
}

export class InProcessTaskBus implements TaskBus {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  publish(record: TaskRecord): void {
    this.emitter.emit(record.taskId, record);
  }

  subscribe(taskId: string, listener: (record: TaskRecord) => void): () => void {
    this.emitter.on(taskId, listener);
    return () => this.emitter.off(taskId, listener);
  }

  listenerCount(taskId: string): number {
    return this.emitter.listenerCount(taskId);
  }
}
