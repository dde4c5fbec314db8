// createCluster: the three cluster seams (TaskBus, InstanceLeases, HolderLink) for one instance.
// "local" = single node, in process. "redis" = several instances sharing a Redis at `url`, all
// keys and channels under `prefix`; an unreachable Redis rejects within a few seconds with an
// error naming the url. "postgres" = several instances sharing a PostgreSQL database at `url`
// (leases in a table, bus and link over LISTEN/NOTIFY on one listening connection, see
// postgresChannels.ts); its schema is checked and migrated first. close() closes all three, the
// lease last (a clean exit frees it at once), then what they share. The Redis and PostgreSQL parts
// (and their drivers) are loaded only by the kind that uses them: a single instance never loads them.

import { type HolderLink, LocalHolderLink } from "./holderLink.js";
import { type InstanceLeases, LocalLeases } from "./instanceLeases.js";
import type { PostgresChannels } from "./postgresChannels.js";
import { type Announced, InProcessTaskBus, type TaskBus } from "./taskBus.js";

export type ClusterOptions =
  | { kind: "local"; instanceId: string }
  | {
      kind: "redis";
      url: string;
      prefix: string;
      leaseMs: number;
      instanceId: string;
      /** Runtime Redis trouble (reconnects, failed publishes/renewals). Default: ignored. */
      onError?: ((error: Error) => void) | undefined;
      /** A lease look-up not answered within this long fails (store.commandTimeoutMs; default 5 s). */
      commandTimeoutMs?: number | undefined;
      /** A connection not ready, or not answering a PING, this long is opened afresh (store.redisReviveAfterMs; default 8 s). */
      reviveAfterMs?: number | undefined;
    }
  | {
      kind: "postgres";
      url: string;
      leaseMs: number;
      instanceId: string;
      /** A statement not answered within this long fails (store.commandTimeoutMs). */
      commandTimeoutMs: number;
      onError?: ((error: Error) => void) | undefined;
    };

export interface Cluster<R extends Announced = Announced> {
  bus: TaskBus<R>;
  leases: InstanceLeases;
  link: HolderLink;
  close(): Promise<void>;
}

function assemble<R extends Announced>(
  bus: TaskBus<R>,
  leases: InstanceLeases,
  link: HolderLink,
  shared: () => Promise<void> = async () => undefined,
): Cluster<R> {
  let closing: Promise<void> | undefined;
  return {
    bus,
    leases,
    link,
    close() {
      // Stop taking commands first, then stop announcing, then give up the lease.
      closing ??= (async () => {
        await link.close();
        await bus.close();
        await leases.close();
        await shared();
      })();
      return closing;
    },
  };
}

export async function createCluster<R extends Announced>(opts: ClusterOptions): Promise<Cluster<R>> {
  if (opts.kind === "local") {
    return assemble(new InProcessTaskBus<R>(), new LocalLeases(opts.instanceId), new LocalHolderLink());
  }
  if (opts.kind === "postgres") return createPostgresCluster(opts);
  const { url, prefix, leaseMs, instanceId, onError, commandTimeoutMs, reviveAfterMs } = opts;
  const [{ RedisTaskBus }, { RedisLeases }, { RedisHolderLink }] = await Promise.all([
    import("./redisTaskBus.js"),
    import("./redisLeases.js"),
    import("./redisHolderLink.js"),
  ]);
  // Connect one after another: a Redis that cannot be reached fails the first one, with one error.
  const opened: Array<{ close(): Promise<void> }> = [];
  try {
    const bus = await RedisTaskBus.connect<R>({ url, prefix, onError, reviveAfterMs });
    opened.push(bus);
    const leases = await RedisLeases.connect({ url, prefix, instanceId, leaseMs, onError, commandTimeoutMs, reviveAfterMs });
    opened.push(leases);
    const link = await RedisHolderLink.connect({ url, prefix, instanceId, onError, reviveAfterMs });
    return assemble(bus, leases, link);
  } catch (error) {
    await Promise.all(opened.map((part) => part.close()));
    throw error;
  }
}

async function createPostgresCluster<R extends Announced>(opts: Extract<ClusterOptions, { kind: "postgres" }>): Promise<Cluster<R>> {
  const onError = opts.onError ?? (() => undefined);
  const [{ openPostgresPool }, { PostgresChannels }, { PostgresTaskBus }, { PostgresLeases }, { PostgresHolderLink }] = await Promise.all([
    import("./postgresConnection.js"),
    import("./postgresChannels.js"),
    import("./postgresTaskBus.js"),
    import("./postgresLeases.js"),
    import("./postgresHolderLink.js"),
  ]);
  const db = await openPostgresPool({ url: opts.url, commandTimeoutMs: opts.commandTimeoutMs, max: 3, onError });
  let channels: PostgresChannels | undefined;
  try {
    channels = await PostgresChannels.open(db, onError);
    const bus = await PostgresTaskBus.open<R>(channels, onError);
    const leases = new PostgresLeases(db, opts.instanceId, opts.leaseMs, onError);
    const link = await PostgresHolderLink.connect({ channels, instanceId: opts.instanceId, onError });
    const opened = channels;
    return assemble(bus, leases, link, async () => {
      await opened.close();
      await db.close();
    });
  } catch (error) {
    await channels?.close();
    await db.close();
    throw error;
  }
}
