// RedisLeases: instance liveness over Redis. start() SETs `<prefix>:lease:<instanceId>` with
// PX leaseMs and renews it every leaseMs/3 (unref'd timer); isAlive(id) = EXISTS on that id's key.
// A crashed instance stops renewing and counts as dead within leaseMs; close() stops renewing and
// DELetes its own key, so a clean shutdown frees at once.

import type { InstanceLeases } from "./instanceLeases.js";
import { closeRedis, connectRedis, type RedisConnection } from "./redisConnection.js";

export interface RedisLeasesOptions {
  url: string;
  prefix: string;
  instanceId: string;
  leaseMs: number;
  /** Failed renewals and connection errors. Default: ignored. */
  onError?: ((error: Error) => void) | undefined;
}

export class RedisLeases implements InstanceLeases {
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  private closed = false;

  private constructor(
    private readonly client: RedisConnection,
    private readonly prefix: string,
    private readonly instanceId: string,
    private readonly leaseMs: number,
    private readonly onError: (error: Error) => void,
  ) {}

  static async connect(options: RedisLeasesOptions): Promise<RedisLeases> {
    if (!Number.isInteger(options.leaseMs) || options.leaseMs < 30) {
      throw new Error(`leaseMs must be an integer >= 30, got ${options.leaseMs}`);
    }
    const onError = options.onError ?? (() => undefined);
    const client = await connectRedis({ url: options.url, onError });
    return new RedisLeases(client, options.prefix, options.instanceId, options.leaseMs, onError);
  }

  private key(instanceId: string): string {
    return `${this.prefix}:lease:${instanceId}`;
  }

  async start(): Promise<void> {
    if (this.closed) throw new Error("RedisLeases is closed");
    if (this.started) return;
    this.started = true;
    await this.renew();
    if (this.closed) return; // close() ran meanwhile; its DEL was queued after this SET
    this.timer = setInterval(
      () => {
        this.renew().catch((error: unknown) => {
          this.onError(new Error(`renewing the lease of ${this.instanceId} failed`, { cause: error }));
        });
      },
      Math.max(10, Math.floor(this.leaseMs / 3)),
    );
    this.timer.unref();
  }

  async isAlive(instanceId: string): Promise<boolean> {
    return (await this.client.exists(this.key(instanceId))) === 1;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    try {
      if (this.started && this.client.isReady) await this.client.del(this.key(this.instanceId));
    } catch (error) {
      this.onError(new Error(`freeing the lease of ${this.instanceId} failed`, { cause: error }));
    }
    await closeRedis(this.client);
  }

  private async renew(): Promise<void> {
    await this.client.set(this.key(this.instanceId), String(Date.now()), {
      expiration: { type: "PX", value: this.leaseMs },
    });
  }
}
