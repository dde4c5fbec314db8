// InstanceLeases: which taskgate instances are alive. A task records the instance holding its
// upstream call; when that instance is gone the task can never finish, so whoever looks at it
// fails it. Single node (LocalLeases): only this process is alive — a holder id from a previous
// process is dead. Several instances (RedisLeases): a renewed key with an expiry per instance.

export interface InstanceLeases {
  /** Starts holding (and renewing) this instance's lease. */
  start(): Promise<void>;
  isAlive(instanceId: string): Promise<boolean>;
  close(): Promise<void>;
}

export class LocalLeases implements InstanceLeases {
  constructor(private readonly self: string) {}

  async start(): Promise<void> {}

  async isAlive(instanceId: string): Promise<boolean> {
    return instanceId === this.self;
  }

  async close(): Promise<void> {}
}
