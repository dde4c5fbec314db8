// CallConnections: the HTTP connections of long exchanges (calls that may stream for minutes, and
// standalone GET streams). Each exchange in flight has a connection of its own; when it ends
// cleanly its connection is kept for the next one, up to `idleMax` idle connections, and any
// other is closed. Unlike a pool of thousands of connections, nothing is kept per exchange once
// it ended, and picking a connection never scans the busy ones — so a burst of 10,000 calls
// leaves no trace once they are over.

import { Client } from "undici";
import { EXCHANGE_CLOSED } from "./transport.js";

export interface CallConnectionsOptions {
  origin: string;
  connectTimeoutMs: number;
  /** Idle connections kept for reuse. */
  idleMax?: number;
}

export class CallConnections {
  private readonly idle: Client[] = [];
  private readonly busy = new Set<Client>();
  private closed = false;

  constructor(private readonly options: CallConnectionsOptions) {}

  /** A connection for one exchange; give it back with release(). */
  acquire(): Client {
    let client = this.idle.pop();
    while (client && (client.closed || client.destroyed)) client = this.idle.pop();
    client ??= new Client(this.options.origin, {
      connect: { timeout: this.options.connectTimeoutMs },
      headersTimeout: 0,
      bodyTimeout: 0,
      keepAliveTimeout: 4_000,
    });
    this.busy.add(client);
    return client;
  }

  /** The exchange ended: `reusable` when its response was read to the end (the connection is clean). */
  release(client: Client, reusable: boolean): void {
    this.busy.delete(client);
    if (reusable && !this.closed && !client.closed && !client.destroyed && this.idle.length < (this.options.idleMax ?? 32)) {
      this.idle.push(client);
    } else {
      // The shared error: undici would build (and Node's teardown format) one per connection otherwise.
      void client.destroy(EXCHANGE_CLOSED).catch(() => undefined);
    }
  }

  /** Connections open right now (in use and idle). */
  get size(): number {
    return this.busy.size + this.idle.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.busy, ...this.idle.splice(0)];
    this.busy.clear();
    await Promise.allSettled(all.map((client) => client.destroy()));
  }
}
