// TaskBus: announces every change of a task record to whoever follows it (subscriptions/listen
// streams). In-process by default; RedisTaskBus carries the same events across instances.
// Contract (test/unit/taskBus.contract.ts): a published record reaches every subscriber of its
// task id, in publish order, and nobody else; a subscriber of all tasks (subscribeAll: the
// inventory's event streams, which filter by owner) gets every record; unsubscribing stops delivery. The bus does not know
// what a task record holds beyond its id (records are JSON values).

import { EventEmitter } from "node:events";
import { isObject } from "../util/json.js";

/** What the bus needs of a record: the id it is announced under. */
export interface Announced {
  taskId: string;
}

export interface TaskBus<R extends Announced = Announced> {
  publish(record: R): void;
  subscribe(taskId: string, listener: (record: R) => void): () => void;
  /** Every record published, of any task. */
  subscribeAll(listener: (record: R) => void): () => void;
  listenerCount(taskId: string): number;
  close(): Promise<void>;
}

/** The emitter event of subscribeAll's listeners (a symbol: no task id can be it). */
const ANY_TASK = Symbol("any task");

export class InProcessTaskBus<R extends Announced = Announced> implements TaskBus<R> {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  /** `onError`: a listener that throws (the others still get the record). Default: ignored. */
  constructor(private readonly onError: (error: Error) => void = () => undefined) {}

  publish(record: R): void {
    // Each listener on its own: one that throws must neither starve the others nor the publisher.
    const listeners = [...this.emitter.listeners(record.taskId), ...this.emitter.listeners(ANY_TASK)] as Array<(r: R) => void>;
    for (const listener of listeners) {
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

  subscribeAll(listener: (record: R) => void): () => void {
    this.emitter.on(ANY_TASK, listener);
    return () => this.emitter.off(ANY_TASK, listener);
  }

  listenerCount(taskId: string): number {
    return this.emitter.listenerCount(taskId);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

/** Hands a record that came as JSON text from another instance to `local`; an unreadable one goes to onError. */
export function deliverAnnounced<R extends Announced>(local: InProcessTaskBus<R>, message: string, onError: (error: Error) => void): void {
  let record: unknown;
  try {
    record = JSON.parse(message);
  } catch (error) {
    onError(new Error("unreadable task-changes message", { cause: error }));
    return;
  }
  if (!isObject(record) || typeof record.taskId !== "string") {
    onError(new Error("task-changes message without a taskId"));
    return;
  }
  local.publish(record as unknown as R);
}

/**
 * A TaskBus whose records travel through another service (RedisTaskBus, PostgresTaskBus): publish()
 * hands the record's JSON to send(); what arrives from there goes to deliver(), which fans it out
 * by task id to this process's subscribers.
 */
export abstract class RemoteTaskBus<R extends Announced> implements TaskBus<R> {
  protected readonly local: InProcessTaskBus<R>;
  protected closed = false;

  protected constructor(protected readonly onError: (error: Error) => void) {
    this.local = new InProcessTaskBus<R>(onError);
  }

  protected abstract send(message: string): Promise<unknown>;

  publish(record: R): void {
    if (this.closed) return;
    this.send(JSON.stringify(record)).catch((error: unknown) => {
      this.onError(new Error(`task-changes publish for ${record.taskId} failed`, { cause: error }));
    });
  }

  subscribe(taskId: string, listener: (record: R) => void): () => void {
    return this.local.subscribe(taskId, listener);
  }

  subscribeAll(listener: (record: R) => void): () => void {
    return this.local.subscribeAll(listener);
  }

  listenerCount(taskId: string): number {
    return this.local.listenerCount(taskId);
  }

  /** A message from another instance (or this one, via the service). */
  deliver(message: string): void {
    deliverAnnounced(this.local, message, this.onError);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.local.close();
  }
}
