// PostgresChannels: messages between instances over PostgreSQL LISTEN/NOTIFY, for the postgres bus
// and holder link. One dedicated connection LISTENs; notify() goes through the pool, one message
// after another (so one instance's messages arrive in the order it sent them). NOTIFY carries at
// most 8000 bytes: a larger message is stored in taskgate_messages and its id notified instead
// (rows older than five minutes are deleted every minute). Each receiver handles its messages one at
// a time, in arrival order, fetching stored ones first.
//
// A dropped listening connection reconnects (50 ms doubling to 2 s) and LISTENs again, then runs
// the onConnect hooks again (the holder link takes its advisory lock there); messages notified
// while it was away are missed, as with Redis pub/sub. The first connect fails at once, naming the url.

import pg from "pg";
import { clientConfig, type PostgresPool } from "./postgresConnection.js";

/** Bytes a NOTIFY payload may have, less room for the one-letter kind. */
const INLINE_MAX = 7_900;
const KEEP_STORED = "5 minutes";

type Receiver = (message: string) => void;

export class PostgresChannels {
  private client: pg.Client | undefined;
  private readonly receivers = new Map<string, Receiver>();
  private readonly onConnect: Array<(client: pg.Client) => Promise<void>> = [];
  private received: Promise<void> = Promise.resolve();
  private sent: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly cleaner: NodeJS.Timeout;

  private constructor(
    readonly db: PostgresPool,
    private readonly onError: (error: Error) => void,
  ) {
    this.cleaner = setInterval(() => {
      db.run(`DELETE FROM taskgate_messages WHERE created_at < now() - interval '${KEEP_STORED}'`).catch((error: unknown) =>
        this.fail("deleting old stored messages failed", error),
      );
    }, 60_000).unref();
  }

  /** Opens the listening connection (rejects, naming the database, if it cannot). */
  static async open(db: PostgresPool, onError: (error: Error) => void = () => undefined): Promise<PostgresChannels> {
    const channels = new PostgresChannels(db, onError);
    try {
      await channels.connect();
    } catch (error) {
      clearInterval(channels.cleaner);
      throw new Error(`cannot listen on ${db.label}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    return channels;
  }

  /** Delivers every message notified on `channel` (a lower-case identifier) to `receive`. */
  async listen(channel: string, receive: Receiver): Promise<void> {
    this.receivers.set(channel, receive);
    await this.client?.query(`LISTEN ${channel}`);
  }

  /** Runs `hook` on the listening connection now and after every reconnect. */
  async whenConnected(hook: (client: pg.Client) => Promise<void>): Promise<void> {
    this.onConnect.push(hook);
    if (this.client !== undefined) await hook(this.client);
  }

  /** Sends `message` on `channel`; resolves once PostgreSQL has taken it. */
  notify(channel: string, message: string): Promise<void> {
    const send = () =>
      Buffer.byteLength(message) <= INLINE_MAX
        ? this.db.run("SELECT pg_notify($1, $2)", [channel, `i${message}`])
        : this.db.run(
            "WITH stored AS (INSERT INTO taskgate_messages (payload) VALUES ($2) RETURNING id) SELECT pg_notify($1, 'r' || id) FROM stored",
            [channel, message],
          );
    const done = this.sent.then(send, send);
    this.sent = done.catch(() => undefined);
    return done.then(() => undefined);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.cleaner);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
    await this.received;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(clientConfig(this.db.options));
    client.on("error", (error: Error) => this.fail("the listening connection failed", error));
    client.on("notification", (note) => this.arrived(note.channel, note.payload ?? ""));
    await client.connect();
    try {
      for (const channel of this.receivers.keys()) await client.query(`LISTEN ${channel}`);
      for (const hook of this.onConnect) await hook(client);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    client.once("end", () => {
      if (this.client === client) void this.reconnect();
    });
    this.client = client;
  }

  private async reconnect(): Promise<void> {
    this.client = undefined;
    for (let attempt = 0; !this.closed; attempt++) {
      try {
        await this.connect();
        return;
      } catch (error) {
        this.fail("reconnecting the listening connection failed", error);
        await new Promise((resolve) => setTimeout(resolve, Math.min(50 * 2 ** attempt, 2_000)).unref());
      }
    }
  }

  private arrived(channel: string, payload: string): void {
    const receive = this.receivers.get(channel);
    if (receive === undefined) return;
    this.received = this.received.then(async () => {
      try {
        const message = payload.startsWith("i") ? payload.slice(1) : await this.fetchStored(payload.slice(1));
        if (message !== undefined) receive(message);
      } catch (error) {
        this.fail(`a message on ${channel} could not be read`, error);
      }
    });
  }

  private async fetchStored(id: string): Promise<string | undefined> {
    const found = await this.db.run<{ payload: string }>("SELECT payload FROM taskgate_messages WHERE id = $1", [id]);
    const payload = found.rows[0]?.payload;
    if (payload === undefined) this.fail(`stored message ${id} is gone (older than ${KEEP_STORED})`, undefined);
    return payload;
  }

  private fail(what: string, cause: unknown): void {
    if (!this.closed) this.onError(new Error(what, { cause }));
  }
}
