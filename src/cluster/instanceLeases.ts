// InstanceLeases: which taskgate instances are alive. A task records the instance holding its
// upstream call; when that instance is gone the task can never finish, so whoever looks at it
// fails it. Single node (LocalLeases): only this process is alive — a holder id from a previous
// process is dead. Several instances (RedisLeases): a renewed key with an expiry per instance.

/** An instance holding a lease now. */
export interface LiveInstance {
  id: string;
  /** When it last renewed its lease (ISO 8601), when the store says. */
  renewedAt?: string;
}

/** At most this many instances are listed (a bound on the operators' summary, not on the cluster). */
export const LIVE_INSTANCES_MAX = 1_000;

export interface InstanceLeases {
  /** Starts holding (and renewing) this instance's lease. */
  start(): Promise<void>;
  isAlive(instanceId: string): Promise<boolean>;
  /** The instances alive now (at most LIVE_INSTANCES_MAX), this one included once started. */
  alive(): Promise<LiveInstance[]>;
  close(): Promise<void>;
}

export class LocalLeases implements InstanceLeases {
  constructor(private readonly self: string) {}

  async start(): Promise<void> {}

  async isAlive(instanceId: string): Promise<boolean> {
    return instanceId === this.self;
  }

  async alive(): Promise<LiveInstance[]> {
    return [{ id: this.self }];
  }

  async close(): Promise<void> {}
}
