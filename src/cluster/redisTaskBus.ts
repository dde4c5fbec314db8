// RedisTaskBus: the TaskBus across instances. publish() PUBLISHes the record JSON on
// `<prefix>:task-changes`; one subscriber connection per bus receives every message (its own
// included, so a local subscriber gets each record exactly once, via Redis) and fans it out by
// task id through an InProcessTaskBus. One publishing connection + one subscriber connection keep per-publisher order.

import { isObject } from "../util/json.js";
import { closeRedis, connectPubSub, type RedisConnection } from "./redisConnection.js";
import { type Announced, InProcessTaskBus, type TaskBus } from "./taskBus.js";

export interface RedisTaskBusOptions {
  url: string;
  prefix: string;
  /** Failed publishes, unreadable messages, throwing listeners, connection errors. Default: ignored. */
  onError?: ((error: Error) => void) | undefined;
}

export class RedisTaskBus<R extends Announced = Announced> implements TaskBus<R> {
  private readonly local: InProcessTaskBus<R>;
  private closed = false;

  private constructor(
    private readonly publisher: RedisConnection,
    private readonly subscriber: RedisConnection,
    private readonly channel: string,
    private readonly onError: (error: Error) => void,
  ) {
    this.local = new InProcessTaskBus<R>(onError);
  }

  /** Resolves once subscribed: every record published after that reaches this bus. */
  static async connect<R extends Announced = Announced>(options: RedisTaskBusOptions): Promise<RedisTaskBus<R>> {
    const onError = options.onError ?? (() => undefined);
    const channel = `${options.prefix}:task-changes`;
    // Messages cannot arrive before `bus` is set: they come on a later turn of the event loop.
    let bus: RedisTaskBus<R> | undefined;
    const { publisher, subscriber } = await connectPubSub({ url: options.url, onError }, (sub) =>
      sub.subscribe(channel, (message: string) => bus?.deliver(message)),
    );
    bus = new RedisTaskBus<R>(publisher, subscriber, channel, onError);
    return bus;
  }

  publish(record: R): void {
    if (this.closed) return;
    this.publisher.publish(this.channel, JSON.stringify(record)).catch((error: unknown) => {
      this.onError(new Error(`task-changes publish for ${record.taskId} failed`, { cause: error }));
    });
  }

  subscribe(taskId: string, listener: (record: R) => void): () => void {
    return this.local.subscribe(taskId, listener);
  }

  listenerCount(taskId: string): number {
    return this.local.listenerCount(taskId);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.local.close();
    try {
      if (this.subscriber.isReady) await this.subscriber.unsubscribe(this.channel);
    } catch {
      // The connection is going away anyway.
    }
    await Promise.all([closeRedis(this.subscriber), closeRedis(this.publisher)]);
  }

  private deliver(message: string): void {
    let record: unknown;
    try {
      record = JSON.parse(message);
    } catch (error) {
      this.onError(new Error("unreadable task-changes message", { cause: error }));
      return;
    }
    if (!isObject(record) || typeof record.taskId !== "string") {
      this.onError(new Error("task-changes message without a taskId"));
      return;
    }
    this.local.publish(record as unknown as R);
  }
}
