// PostgresHolderLink: the holder link over PostgreSQL LISTEN/NOTIFY (request/reply in
// ChannelHolderLink, messages through PostgresChannels). Every instance listens on one channel,
// taskgate_link; a message's first line names its addressee ("i:<instanceId>" for a request,
// "r:<replyTo>" for a reply), so each instance keeps only its own. A serving instance holds a session
// advisory lock (key: LOCK_SPACE, a hash of its id) on its listening connection; PostgreSQL drops it
// the moment that connection goes (a crash, kill -9), so a request to an instance that holds no such
// lock is answered "nobody serves it" at once, like a Redis PUBLISH that reached nobody.

import { createHash } from "node:crypto";
import { type ChannelHolderLink, connectChannelLink, type LinkTransport } from "./channelHolderLink.js";
import type { PostgresChannels } from "./postgresChannels.js";

const CHANNEL = "taskgate_link";
/** The first key of taskgate's advisory locks ("tg"). */
const LOCK_SPACE = 0x7467;

const lockKey = (instanceId: string) => createHash("sha256").update(instanceId).digest().readUInt32BE(0) & 0x7fffffff;

class PostgresLinkTransport implements LinkTransport {
  private onRequest: ((message: string) => void) | undefined;

  constructor(
    private readonly channels: PostgresChannels,
    private readonly instanceId: string,
    private readonly onError: (error: Error) => void,
  ) {}

  /** Routes a message on the channel to this link's replies or its requests. */
  receive(message: string, replyTo: string, onReply: (message: string) => void): void {
    const cut = message.indexOf("\n");
    let to: unknown;
    try {
      to = JSON.parse(message.slice(0, cut));
    } catch {
      this.onError(new Error("holder link message without an addressee"));
      return;
    }
    const body = message.slice(cut + 1);
    if (to === `r:${replyTo}`) onReply(body);
    else if (to === `i:${this.instanceId}`) this.onRequest?.(body);
  }

  async request(instanceId: string, message: string): Promise<boolean> {
    const served = await this.channels.db.run(
      "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND objid = $2 AND objsubid = 2 AND granted",
      [LOCK_SPACE, lockKey(instanceId)],
    );
    if (served.rowCount === 0) return false;
    await this.send(`i:${instanceId}`, message);
    return true;
  }

  reply(replyTo: string, message: string): Promise<void> {
    return this.send(`r:${replyTo}`, message);
  }

  async serve(onRequest: (message: string) => void): Promise<void> {
    this.onRequest = onRequest;
    await this.channels.whenConnected(async (client) => {
      const taken = await client.query<{ taken: boolean }>("SELECT pg_try_advisory_lock($1, $2) AS taken", [
        LOCK_SPACE,
        lockKey(this.instanceId),
      ]);
      if (taken.rows[0]?.taken !== true) {
        this.onError(new Error(`another connection holds the holder-link lock of ${this.instanceId} (the same instance id twice?)`));
      }
    });
  }

  /** The channels (and with them the lock) are closed by their owner (createCluster). */
  async close(): Promise<void> {
    this.onRequest = undefined;
  }

  private send(to: string, body: string): Promise<void> {
    return this.channels.notify(CHANNEL, `${JSON.stringify(to)}\n${body}`);
  }
}

export interface PostgresHolderLinkOptions {
  channels: PostgresChannels;
  instanceId: string;
  /** How often a holder whose handler still runs says so (default 1 s). */
  heartbeatMs?: number;
  onError?: ((error: Error) => void) | undefined;
}

export const PostgresHolderLink = {
  /** Resolves once this instance listens for its replies (send() works from then on). */
  connect(options: PostgresHolderLinkOptions): Promise<ChannelHolderLink> {
    const onError = options.onError ?? (() => undefined);
    return connectChannelLink(
      options.instanceId,
      async (replyTo, onReply) => {
        const transport = new PostgresLinkTransport(options.channels, options.instanceId, onError);
        await options.channels.listen(CHANNEL, (message) => transport.receive(message, replyTo, onReply));
        return transport;
      },
      onError,
      options.heartbeatMs,
    );
  },
};
