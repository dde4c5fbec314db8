// RedisHolderLink: the holder link over Redis pub/sub (request/reply in ChannelHolderLink). Requests
// go to `<prefix>:instance:<id>`, replies to `<prefix>:reply:<replyTo>`; a PUBLISH that reaches
// nobody means the holder is gone.

import { type ChannelHolderLink, connectChannelLink, type LinkTransport } from "./channelHolderLink.js";
import { closeRedis, connectPubSub, type RedisConnection } from "./redisConnection.js";

const replyChannelOf = (prefix: string, replyTo: string) => `${prefix}:reply:${replyTo}`;
const instanceChannelOf = (prefix: string, instanceId: string) => `${prefix}:instance:${instanceId}`;

export interface RedisHolderLinkOptions {
  url: string;
  /** A connection not ready, or not answering a PING, this long is opened afresh (store.redisReviveAfterMs). */
  reviveAfterMs?: number | undefined;
  prefix: string;
  instanceId: string;
  /** How often a holder whose handler still runs says so (default 1 s; keep it well under the senders' timeouts). */
  heartbeatMs?: number;
  /** Unreadable messages, failed replies, connection errors. Default: ignored. */
  onError?: ((error: Error) => void) | undefined;
}

class RedisLinkTransport implements LinkTransport {
  constructor(
    private readonly publisher: RedisConnection,
    private readonly subscriber: RedisConnection,
    private readonly prefix: string,
    private readonly instanceId: string,
  ) {}

  async request(instanceId: string, message: string): Promise<boolean> {
    return (await this.publisher.publish(instanceChannelOf(this.prefix, instanceId), message)) > 0;
  }

  async reply(replyTo: string, message: string): Promise<void> {
    await this.publisher.publish(replyChannelOf(this.prefix, replyTo), message);
  }

  async serve(onRequest: (message: string) => void): Promise<void> {
    await this.subscriber.subscribe(instanceChannelOf(this.prefix, this.instanceId), onRequest);
  }

  async close(): Promise<void> {
    try {
      if (this.subscriber.isReady) await this.subscriber.unsubscribe();
    } catch {
      // The connection is going away anyway.
    }
    await Promise.all([closeRedis(this.subscriber), closeRedis(this.publisher)]);
  }
}

export const RedisHolderLink = {
  /** Resolves once this link's reply channel is subscribed (send() works from then on). */
  connect(options: RedisHolderLinkOptions): Promise<ChannelHolderLink> {
    const onError = options.onError ?? (() => undefined);
    return connectChannelLink(
      options.instanceId,
      async (replyTo, onReply) => {
        const { publisher, subscriber } = await connectPubSub({ url: options.url, onError, reviveAfterMs: options.reviveAfterMs }, (sub) =>
          sub.subscribe(replyChannelOf(options.prefix, replyTo), onReply),
        );
        return new RedisLinkTransport(publisher, subscriber, options.prefix, options.instanceId);
      },
      onError,
      options.heartbeatMs,
    );
  },
};
