// PostgresLeases: instance liveness in PostgreSQL (see RenewingLeases for start/renew/close). The
// lease is a row of taskgate_leases whose expires_at is set from the database's clock (now() +
// leaseMs), so instances with skewed clocks agree; isAlive(id) = that row exists and has not expired.

import { LIVE_INSTANCES_MAX, type LiveInstance } from "./instanceLeases.js";
import type { PostgresPool } from "./postgresConnection.js";
import { RenewingLeases } from "./renewingLeases.js";

export class PostgresLeases extends RenewingLeases {
  constructor(
    private readonly db: PostgresPool,
    instanceId: string,
    leaseMs: number,
    onError: (error: Error) => void = () => undefined,
  ) {
    super(instanceId, leaseMs, onError);
  }

  async isAlive(instanceId: string): Promise<boolean> {
    const found = await this.db.run("SELECT 1 FROM taskgate_leases WHERE instance_id = $1 AND expires_at > now()", [instanceId]);
    return found.rowCount === 1;
  }

  async alive(): Promise<LiveInstance[]> {
    const rows = await this.db.run("SELECT instance_id FROM taskgate_leases WHERE expires_at > now() ORDER BY instance_id LIMIT $1", [
      LIVE_INSTANCES_MAX,
    ]);
    return (rows.rows as Array<{ instance_id: string }>).map((row) => ({ id: row.instance_id }));
  }

  protected async renew(): Promise<void> {
    await this.db.run(
      `INSERT INTO taskgate_leases (instance_id, expires_at) VALUES ($1, now() + $2 * interval '1 millisecond')
       ON CONFLICT (instance_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
      [this.instanceId, this.leaseMs],
    );
  }

  protected get connected(): boolean {
    return true;
  }

  protected async free(): Promise<void> {
    await this.db.run("DELETE FROM taskgate_leases WHERE instance_id = $1", [this.instanceId]);
  }

  /** The pool belongs to the cluster (createCluster closes it). */
  protected async release(): Promise<void> {}
}
