// RedisLeases: instance liveness over Redis (see RenewingLeases for start/renew/close). The lease is
// `<prefix>:lease:<instanceId>`, SET with PX leaseMs; isAlive(id) = EXISTS on that id's key.

import { limit } from "../util/timeLimit.js";
import { LIVE_INSTANCES_MAX, type LiveInstance } from "./instanceLeases.js";
import { closeRedis, connectRedis, type RedisConnection } from "./redisConnection.js";
import { RenewingLeases } from "./renewingLeases.js";

export interface RedisLeasesOptions {
  url: string;
  /** A connection not ready, or not answering a PING, this long is opened afresh (store.redisReviveAfterMs). */
  reviveAfterMs?: number | undefined;
  prefix: string;
  instanceId: string;
  leaseMs: number;
  /** Failed renewals and connection errors. Default: ignored. */
  onError?: ((error: Error) => void) | undefined;
  /** A lease look-up Redis has not answered within this long rejects, naming it (store.commandTimeoutMs; default 5 s). */
  commandTimeoutMs?: number | undefined;
}

export class RedisLeases extends RenewingLeases {
  private readonly timeoutMs: number;

  private constructor(
    private readonly client: RedisConnection,
    private readonly prefix: string,
    options: RedisLeasesOptions,
    onError: (error: Error) => void,
  ) {
    super(options.instanceId, options.leaseMs, onError);
    this.timeoutMs = options.commandTimeoutMs ?? 5_000;
  }

  static async connect(options: RedisLeasesOptions): Promise<RedisLeases> {
    if (!Number.isInteger(options.leaseMs) || options.leaseMs < 30) {
      throw new Error(`leaseMs must be an integer >= 30, got ${options.leaseMs}`);
    }
    const onError = options.onError ?? (() => undefined);
    const client = await connectRedis({
      url: options.url,
      onError,
      commandTimeoutMs: options.commandTimeoutMs ?? 5_000,
      reviveAfterMs: options.reviveAfterMs,
    });
    return new RedisLeases(client, options.prefix, options, onError);
  }

  private key(instanceId: string): string {
    return `${this.prefix}:lease:${instanceId}`;
  }

  async isAlive(instanceId: string): Promise<boolean> {
    const exists = this.client.exists(this.key(instanceId)).catch((error: unknown) => {
      throw new Error(`instance leases (redis): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    });
    const answer = limit(
      exists,
      this.timeoutMs,
      () => `instance leases (redis) did not answer within ${this.timeoutMs} ms (store.commandTimeoutMs)`,
    );
    return (await answer) === 1;
  }

  /** SCAN over the lease keys (bounded), then their values: the renewal times. */
  async alive(): Promise<LiveInstance[]> {
    const keys: string[] = [];
    for await (const batch of this.client.scanIterator({ MATCH: this.key("*"), COUNT: 100 })) {
      keys.push(...batch);
      if (keys.length >= LIVE_INSTANCES_MAX) break;
    }
    const chosen = keys.slice(0, LIVE_INSTANCES_MAX);
    const renewed = chosen.length === 0 ? [] : await this.client.mGet(chosen);
    return chosen.map((key, index) => {
      const at = Number(renewed[index]);
      return { id: key.slice(this.key("").length), ...(Number.isFinite(at) && at > 0 ? { renewedAt: new Date(at).toISOString() } : {}) };
    });
  }

  protected async renew(): Promise<void> {
    await this.client.set(this.key(this.instanceId), String(Date.now()), {
      expiration: { type: "PX", value: this.leaseMs },
    });
  }

  protected get connected(): boolean {
    return this.client.isReady;
  }

  protected async free(): Promise<void> {
    await this.client.del(this.key(this.instanceId));
  }

  protected release(): Promise<void> {
    return closeRedis(this.client);
  }
}
