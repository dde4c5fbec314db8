// PostgreSQL for the tests: the server at PG_URL (default postgres://postgres@127.0.0.1:5432/postgres,
// trust auth), a fresh database with a random name per call of freshDatabase() (every one dropped,
// with its connections, when the importing test file's tests have ended), and POSTGRES_SKIP: the
// reason the postgres tests skip (printed by node:test) when that server cannot be reached.

import { randomBytes } from "node:crypto";
import { after } from "node:test";
import pg from "pg";

export const PG_URL = process.env.PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** undefined when PostgreSQL answers at PG_URL; else why the postgres tests skip. */
export const POSTGRES_SKIP: string | undefined = await admin(async () => undefined).catch(
  (error: unknown) => `PostgreSQL not reachable at ${PG_URL}: ${error instanceof Error ? error.message : String(error)}`,
);

const created: string[] = [];
after(async () => {
  if (created.length === 0) return;
  await admin(async (client) => {
    for (const name of created.splice(0)) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
});

/** A new empty database; returns its url. */
export async function freshDatabase(): Promise<string> {
  const name = `taskgate_test_${randomBytes(8).toString("hex")}`;
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  created.push(name);
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return url.toString();
}
