// RedisSessionLedger: the SessionLedger of several instances on one Redis: a SET
// "<prefix>:upstream-sessions:<instanceId>" per instance (a fleet backend's:
// "<prefix>:upstream-sessions@<backend>:<instanceId>", on the same connection). Leftovers are the sets of instances
// whose lease is gone; taking them deletes the set. Commands are best effort (a failure is logged)
// and bounded by store.commandTimeoutMs, so a Redis that is gone never holds up a call or shutdown.

import type { RedisClientType } from "@redis/client";
import type { Logger } from "pino";
import type { SessionLedger } from "./sessionLedger.js";

export class RedisSessionLedger implements SessionLedger {
  private readonly scopes = new Map<string, RedisSessionLedger>();

  private constructor(
    private readonly client: RedisClientType,
    private readonly prefix: string,
    private readonly instanceId: string,
    private readonly log: Logger,
    /** The backend whose sessions these are (a fleet); unset: the single upstream's. */
    private readonly scope?: string,
  ) {}

  static async open(options: {
    connect: () => Promise<RedisClientType>;
    prefix: string;
    instanceId: string;
    log: Logger;
  }): Promise<RedisSessionLedger> {
    return new RedisSessionLedger(await options.connect(), options.prefix, options.instanceId, options.log);
  }

  add(sessionId: string): void {
    this.client.sAdd(this.key(this.instanceId), sessionId).catch((error: unknown) => this.failed(error));
  }

  remove(sessionId: string): void {
    this.client.sRem(this.key(this.instanceId), sessionId).catch((error: unknown) => this.failed(error));
  }

  async takeLeftovers(isAlive: (instanceId: string) => Promise<boolean>): Promise<string[]> {
    const leftovers: string[] = [];
    const pattern = this.key("*");
    for await (const keys of this.client.scanIterator({ MATCH: pattern, COUNT: 100 })) {
      for (const key of keys) {
        const instanceId = key.slice(this.key("").length);
        if (instanceId === this.instanceId || (await isAlive(instanceId))) continue;
        leftovers.push(...(await this.client.sMembers(key)));
        await this.client.del(key);
      }
    }
    return leftovers;
  }

  scoped(name: string): SessionLedger {
    let scope = this.scopes.get(name);
    if (!scope) this.scopes.set(name, (scope = new RedisSessionLedger(this.client, this.prefix, this.instanceId, this.log, name)));
    return scope;
  }

  async close(): Promise<void> {
    // A backend's ledger shares its owner's connection: the owner closes it (and deletes this key too).
    if (this.scope !== undefined) {
      await this.client.del(this.key(this.instanceId)).catch(() => undefined);
      return;
    }
    const keys = [this.key(this.instanceId), ...[...this.scopes.values()].map((scope) => scope.key(scope.instanceId))];
    await this.client.del(keys).catch(() => undefined);
    // A connection that is not ready (Redis gone, reconnecting) would wait for Redis to close: drop it.
    if (this.client.isReady) await this.client.close().catch(() => undefined);
    else if (this.client.isOpen) this.client.destroy();
  }

  private key(instanceId: string): string {
    return this.scope === undefined
      ? `${this.prefix}:upstream-sessions:${instanceId}`
      : `${this.prefix}:upstream-sessions@${this.scope}:${instanceId}`;
  }

  private failed(error: unknown): void {
    this.log.warn(
      { event: "upstream.ledger.failed", err: error instanceof Error ? error.message : String(error) },
      "could not note an upstream session",
    );
  }
}
