// RedisTaskBus: the TaskBus across instances. publish() PUBLISHes the record JSON on
// `<prefix>:task-changes`; one subscriber connection per bus receives every message (its own
// included, so a local subscriber gets each record exactly once, via Redis) and fans it out by
// task id through an InProcessTaskBus. One publishing connection + one subscriber connection keep per-publisher order.

import { closeRedis, connectPubSub, type RedisConnection } from "./redisConnection.js";
import { type Announced, RemoteTaskBus } from "./taskBus.js";

export interface RedisTaskBusOptions {
  url: string;
  /** A connection not ready, or not answering a PING, this long is opened afresh (store.redisReviveAfterMs). */
  reviveAfterMs?: number | undefined;
  prefix: string;
  /** Failed publishes, unreadable messages, throwing listeners, connection errors. Default: ignored. */
  onError?: ((error: Error) => void) | undefined;
}

export class RedisTaskBus<R extends Announced = Announced> extends RemoteTaskBus<R> {
  private constructor(
    private readonly publisher: RedisConnection,
    private readonly subscriber: RedisConnection,
    private readonly channel: string,
    onError: (error: Error) => void,
  ) {
    super(onError);
  }

  /** Resolves once subscribed: every record published after that reaches this bus. */
  static async connect<R extends Announced = Announced>(options: RedisTaskBusOptions): Promise<RedisTaskBus<R>> {
    const onError = options.onError ?? (() => undefined);
    const channel = `${options.prefix}:task-changes`;
    // Messages cannot arrive before `bus` is set: they come on a later turn of the event loop.
    let bus: RedisTaskBus<R> | undefined;
    const { publisher, subscriber } = await connectPubSub({ url: options.url, onError, reviveAfterMs: options.reviveAfterMs }, (sub) =>
      sub.subscribe(channel, (message: string) => bus?.deliver(message)),
    );
    bus = new RedisTaskBus<R>(publisher, subscriber, channel, onError);
    return bus;
  }

  protected send(message: string): Promise<unknown> {
    return this.publisher.publish(this.channel, message);
  }

  override async close(): Promise<void> {
    if (this.closed) return;
    await super.close();
    try {
      if (this.subscriber.isReady) await this.subscriber.unsubscribe(this.channel);
    } catch {
      // The connection is going away anyway.
    }
    await Promise.all([closeRedis(this.subscriber), closeRedis(this.publisher)]);
  }
}
