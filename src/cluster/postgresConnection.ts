// Connections to PostgreSQL for every PostgreSQL user (the postgres task store, and the cluster's
// leases, bus and holder link). Contract: openPostgresPool resolves once one query has run on the
// database and its schema is current (postgresSchema.ts); an unreachable database rejects within
// connectTimeoutMs with an error naming the url (password hidden). Every query through `run` has a
// limit (commandTimeoutMs): the caller's wait ends then with an error naming the database and the
// setting, and PostgreSQL cancels the statement a second later (statement_timeout).

import pg from "pg";
import { withoutPassword } from "../util/safeUrl.js";
import { limit } from "../util/timeLimit.js";
import { ensureSchema } from "./postgresSchema.js";

export interface PostgresConnectOptions {
  url: string;
  /** How errors name this database (default "postgres <url without password>"). */
  label?: string;
  /** A query not answered within this long fails (config store.commandTimeoutMs). */
  commandTimeoutMs: number;
  /** Connections in the pool (default 8). */
  max?: number;
  /** Default 3 s. */
  connectTimeoutMs?: number;
  /** Connection errors after the start (a dropped idle connection). Default: ignored. */
  onError?: ((error: Error) => void) | undefined;
}

/** The url as safe to show: any password replaced by "***". */
export const describePostgresUrl = withoutPassword;

/** The connection settings pg takes for one connection, with the limits set. */
export function clientConfig(options: PostgresConnectOptions): pg.ClientConfig {
  return {
    connectionString: options.url,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 3_000,
    // A little later than the caller's own limit, so the error the caller sees is ours (naming the
    // setting), while PostgreSQL still cancels a statement nobody waits for any more.
    statement_timeout: options.commandTimeoutMs + 1_000,
    keepAlive: true,
    application_name: "taskgate",
  };
}

/** A pool with the store's name and limit attached: every query goes through run(). */
export class PostgresPool {
  readonly label: string;

  constructor(
    readonly pool: pg.Pool,
    readonly options: PostgresConnectOptions,
  ) {
    this.label = options.label ?? `postgres ${describePostgresUrl(options.url)}`;
  }

  /** Runs one statement with the limit; errors name `as` (default: the database). */
  run<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = [], as = this.label): Promise<pg.QueryResult<R>> {
    const ms = this.options.commandTimeoutMs;
    const sent = this.pool.query<R>(text, values).catch((error: unknown) => {
      throw new Error(`${as}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    });
    return limit(sent, ms, () => `${as} did not answer within ${ms} ms (store.commandTimeoutMs; the statement may still be carried out)`);
  }

  /** Ends every connection; never throws. */
  async close(): Promise<void> {
    try {
      await limit(this.pool.end(), this.options.commandTimeoutMs, () => "pool end timed out");
    } catch {
      // Connections are dropped with the process anyway.
    }
  }
}

export async function openPostgresPool(options: PostgresConnectOptions): Promise<PostgresPool> {
  // pg's connectionTimeoutMillis also bounds the wait for a free connection of the pool: under a
  // burst that wait is part of the command, which run() already limits to commandTimeoutMs.
  const connectionTimeoutMillis = Math.max(options.connectTimeoutMs ?? 3_000, options.commandTimeoutMs);
  const pool = new pg.Pool({ ...clientConfig(options), connectionTimeoutMillis, max: options.max ?? 8, idleTimeoutMillis: 30_000 });
  // Without an 'error' listener pg would crash the process when an idle connection drops.
  const onError = options.onError ?? (() => undefined);
  pool.on("error", (error: Error) => onError(error));
  const opened = new PostgresPool(pool, options);
  try {
    await opened.run("SELECT 1");
    await ensureSchema(opened);
    return opened;
  } catch (error) {
    await opened.close();
    const reason = error instanceof Error ? error.message.replace(`${opened.label}: `, "") : String(error);
    throw new Error(`cannot use PostgreSQL at ${describePostgresUrl(options.url)}: ${reason}`, { cause: error });
  }
}
