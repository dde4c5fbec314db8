// TaskBus: announces every change of a task record to whoever follows it (subscriptions/listen
// streams). In-process by default; RedisTaskBus carries the same events across instances.
// Contract (test/unit/taskBus.contract.ts): a published record reaches every subscriber of its
// task id, in publish order, and nobody else; unsubscribing stops delivery.

import { EventEmitter } from "node:events";
import type { TaskRecord } from "./taskRecord.js";

export interface TaskBus {
  publish(record: TaskRecord): void;
  subscribe(taskId: string, listener: (record: TaskRecord) => void): () => void;
  listenerCount(taskId: string): number;
  close(): Promise<void>;
}

export class InProcessTaskBus implements TaskBus {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  /** `onError`: a listener that throws (the others still get the record). Default: ignored. */
  constructor(private readonly onError: (error: Error) => void = () => undefined) {}

  publish(record: TaskRecord): void {
    // Each listener on its own: one that throws must neither starve the others nor the publisher.
    for (const listener of this.emitter.listeners(record.taskId) as Array<(r: TaskRecord) => void>) {
      try {
        listener(record);
      } catch (error) {
        this.onError(error instanceof Error ? error : new Error(String(error)));
      }
    }
  }

  subscribe(taskId: string, listener: (record: TaskRecord) => void): () => void {
    this.emitter.on(taskId, listener);
    return () => this.emitter.off(taskId, listener);
  }

  listenerCount(taskId: string): number {
    return this.emitter.listenerCount(taskId);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}
