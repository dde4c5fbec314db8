// TaskBus: announces every change of a task record to whoever follows it (subscriptions/listen
// streams). In-process by default; RedisTaskBus carries the same events across instances.
// Contract (test/unit/taskBus.contract.ts): a published record reaches every subscriber of its
// task id, in publish order, and nobody else; unsubscribing stops delivery. The bus does not know
// what a task record holds beyond its id (records are JSON values).

import { EventEmitter } from "node:events";

/** What the bus needs of a record: the id it is announced under. */
export interface Announced {
  taskId: string;
}

export interface TaskBus<R extends Announced = Announced> {
  publish(record: R): void;
  subscribe(taskId: string, listener: (record: R) => void): () => void;
  listenerCount(taskId: string): number;
  close(): Promise<void>;
}

export class InProcessTaskBus<R extends Announced = Announced> implements TaskBus<R> {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  /** `onError`: a listener that throws (the others still get the record). Default: ignored. */
  constructor(private readonly onError: (error: Error) => void = () => undefined) {}

  publish(record: R): void {
    // Each listener on its own: one that throws must neither starve the others nor the publisher.
    for (const listener of this.emitter.listeners(record.taskId) as Array<(r: R) => void>) {
      try {
        listener(record);
      } catch (error) {
        this.onError(error instanceof Error ? error : new Error(String(error)));
      }
    }
  }

  subscribe(taskId: string, listener: (record: R) => void): () => void {
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
