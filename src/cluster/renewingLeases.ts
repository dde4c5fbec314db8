// RenewingLeases: the part of a shared InstanceLeases that does not depend on where the leases
// live (RedisLeases, PostgresLeases). start() writes this instance's lease and renews it every
// leaseMs/3 (an unref'd timer); a crashed instance stops renewing and counts as dead within leaseMs;
// close() stops renewing, frees its own lease (a clean shutdown frees at once) and lets go of the
// connection.

import type { InstanceLeases, LiveInstance } from "./instanceLeases.js";

export abstract class RenewingLeases implements InstanceLeases {
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  private closed = false;

  protected constructor(
    protected readonly instanceId: string,
    protected readonly leaseMs: number,
    private readonly onError: (error: Error) => void,
  ) {
    if (!Number.isInteger(leaseMs) || leaseMs < 30) throw new Error(`leaseMs must be an integer >= 30, got ${leaseMs}`);
  }

  /** Writes (or extends) this instance's lease to end leaseMs from now. */
  protected abstract renew(): Promise<void>;
  /** Deletes this instance's lease; `connected` false = the connection is gone, skip it. */
  protected abstract free(): Promise<void>;
  protected abstract get connected(): boolean;
  /** Closes the connection; never throws. */
  protected abstract release(): Promise<void>;
  abstract isAlive(instanceId: string): Promise<boolean>;
  abstract alive(): Promise<LiveInstance[]>;

  async start(): Promise<void> {
    if (this.closed) throw new Error(`${this.constructor.name} is closed`);
    if (this.started) return;
    this.started = true;
    await this.renew();
    if (this.closed) return; // close() ran meanwhile; its delete was queued after this write
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

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    try {
      if (this.started && this.connected) await this.free();
    } catch (error) {
      this.onError(new Error(`freeing the lease of ${this.instanceId} failed`, { cause: error }));
    }
    await this.release();
  }
}
