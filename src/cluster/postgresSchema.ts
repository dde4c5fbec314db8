// The PostgreSQL schema of taskgate (the postgres task store and the cluster's tables), as numbered
// migrations. ensureSchema runs at every start, in one transaction under an advisory lock (so two
// instances starting together migrate once): it applies the migrations the database lacks and
// records each in taskgate_schema. A database whose schema is newer than this taskgate knows (a
// newer version migrated it) is refused, naming both versions, since this version's statements may
// no longer fit it.
//
// Tables: taskgate_tasks (one row per record: its JSON text plus the columns the indexes and filters
// need), taskgate_leases (instance liveness, by database time), taskgate_messages (bus and link
// payloads too big for one NOTIFY, kept a few minutes), taskgate_push_books (one row per owner with
// Web Push subscriptions: the book's JSON text).

import type { PostgresPool } from "./postgresConnection.js";

/** Each entry moves the schema from version i to i + 1; append only, never edit a released one. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE taskgate_tasks (
     task_id text COLLATE "C" PRIMARY KEY,
     owner_hash text COLLATE "C" NOT NULL,
     created_ms bigint NOT NULL,
     deadline_ms bigint,
     unfinished_by text COLLATE "C",
     status text NOT NULL,
     tool text NOT NULL,
     backend text,
     version bigint NOT NULL,
     record text NOT NULL
   );
   CREATE INDEX taskgate_tasks_by_owner ON taskgate_tasks (owner_hash, created_ms DESC, task_id DESC);
   CREATE INDEX taskgate_tasks_by_created ON taskgate_tasks (created_ms DESC, task_id DESC);
   CREATE INDEX taskgate_tasks_unfinished ON taskgate_tasks (unfinished_by) WHERE unfinished_by IS NOT NULL;
   CREATE INDEX taskgate_tasks_deadline ON taskgate_tasks (deadline_ms) WHERE deadline_ms IS NOT NULL;
   CREATE TABLE taskgate_leases (instance_id text PRIMARY KEY, expires_at timestamptz NOT NULL);
   CREATE TABLE taskgate_messages (
     id bigserial PRIMARY KEY,
     created_at timestamptz NOT NULL DEFAULT now(),
     payload text NOT NULL
   );
   CREATE INDEX taskgate_messages_created ON taskgate_messages (created_at);`,
  `CREATE TABLE taskgate_push_books (owner_hash text COLLATE "C" PRIMARY KEY, book text NOT NULL);`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Creates or migrates the schema; rejects for a schema newer than SCHEMA_VERSION. */
export async function ensureSchema(db: PostgresPool): Promise<void> {
  const client = await db.pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtext('taskgate schema'))");
    await client.query(
      "CREATE TABLE IF NOT EXISTS taskgate_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const found = await client.query<{ version: number | null }>("SELECT max(version) AS version FROM taskgate_schema");
    const current = found.rows[0]?.version ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new Error(
        `its taskgate schema is at version ${current}, newer than this taskgate knows (${SCHEMA_VERSION}): ` +
          "a newer taskgate has migrated this database. Run that version (or newer) here too, or point store.url at another database",
      );
    }
    for (let version = current + 1; version <= SCHEMA_VERSION; version++) {
      await client.query(MIGRATIONS[version - 1]!);
      await client.query("INSERT INTO taskgate_schema (version) VALUES ($1)", [version]);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
