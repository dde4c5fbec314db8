// A Redis connection comes back after Redis does. Against a real redis-server of its own: restarted
// on the same port (once, and while frozen), the connection answers again. Two states node-redis
// cannot leave by itself are made with HalfOpenRelay, a TCP relay in front of the real Redis (they
// cannot be made on loopback with a real Redis alone): a half-open socket, ready while nothing sent
// on it is answered; and a reconnect accepted whose handshake is never answered — node-redis sets no
// limit on it and stays open, never ready, with no further event (the dead store connection of a
// chaos run, node-redis #3346). The watch starts both afresh.

import assert from "node:assert/strict";
import { createServer, Socket as NetSocket, type Server, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { closeRedis, connectRedis, type RedisConnection } from "../../src/cluster/redisConnection.js";
import { needsRedis, RedisProcess } from "../support/redisServer.js";

const REVIVE_AFTER_MS = 600;
/** connectRedis waits this long before connecting a destroyed connection again (3 s connect limit + 2 s backoff + 0.5 s). */
const SETTLE_MS = 5_500;
const errors: string[] = [];
const onError = (error: Error) => errors.push(error.message);

/** The fake (see the top of the file): stale() makes every connection it has so far swallow what it is sent. */
class HalfOpenRelay {
  private readonly pairs: Array<{ client: Socket; upstream: Socket; stale: boolean }> = [];
  private swallowing = 0;
  readonly swallowed: Socket[] = [];
  private constructor(private readonly server: Server) {}

  static async start(target: number): Promise<HalfOpenRelay> {
    const server = createServer();
    const relay = new HalfOpenRelay(server);
    server.on("connection", (client) => relay.pass(client, target));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return relay;
  }

  get url(): string {
    const address = this.server.address();
    assert.ok(address !== null && typeof address === "object");
    return `redis://127.0.0.1:${address.port}`;
  }

  stale(): void {
    for (const pair of this.pairs) pair.stale = true;
  }

  /** The next `count` connections are accepted and kept open, and nothing they send is passed on. */
  swallowNext(count: number): void {
    this.swallowing = count;
  }

  /** Resets (RST) every connection it has, as a Redis dying with commands unread does; later ones pass. */
  resetAll(): void {
    for (const { client, upstream } of this.pairs.splice(0)) {
      client.resetAndDestroy();
      upstream.destroy();
    }
  }

  /** Closes every connection it has (as a Redis going away would); later ones pass as before. */
  cutAll(): void {
    for (const { client, upstream } of this.pairs.splice(0)) {
      client.destroy();
      upstream.destroy();
    }
  }

  async close(): Promise<void> {
    for (const socket of this.swallowed) socket.destroy();
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private pass(client: Socket, target: number): void {
    if (this.swallowing > 0) {
      this.swallowing--;
      this.swallowed.push(client);
      client.on("error", () => undefined);
      return;
    }
    const upstream = new NetSocket();
    const pair = { client, upstream, stale: false };
    this.pairs.push(pair);
    upstream.connect(target, "127.0.0.1");
    client.on("data", (chunk) => pair.stale || upstream.write(chunk));
    upstream.on("data", (chunk) => pair.stale || client.write(chunk));
    for (const socket of [client, upstream]) socket.on("error", () => undefined);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => pair.stale || client.destroy());
  }
}

async function answersWithin(client: RedisConnection, ms: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    const reply = await Promise.race([client.ping().catch(() => "failed"), new Promise((r) => setTimeout(() => r("late"), 300))]);
    if (reply === "PONG") return performance.now() - started;
    if (performance.now() - started > ms) assert.fail(`no PONG within ${ms} ms (last: ${String(reply)})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The watch reported a connection left not ready and started it afresh; it answers again in time. */
async function revivedNotReady(client: RedisConnection): Promise<void> {
  const took = await answersWithin(client, 15_000);
  assert.ok(
    errors.some((e) => /not ready for 600 ms: starting it afresh/.test(e)),
    `the revival was reported: ${errors.join("; ")}`,
  );
  assert.ok(took < REVIVE_AFTER_MS * 2 + SETTLE_MS + 2_000, `answered again after ${Math.round(took)} ms`);
}

describe("a Redis connection comes back after Redis does", needsRedis, () => {
  let redis: RedisProcess;
  before(async () => {
    redis = await RedisProcess.start();
  });
  after(async () => {
    if (redis.isRunning()) redis.resume();
    await redis.close();
  });

  it("Redis restarted on the same port: answered again", async () => {
    const client = await connectRedis({ url: redis.url, onError, reviveAfterMs: REVIVE_AFTER_MS });
    try {
      await client.set("k", "v");
      await redis.restart();
      await answersWithin(client, 10_000);
      assert.equal(await client.get("k"), null, "the new Redis is empty: the answer is its own");
    } finally {
      await closeRedis(client);
    }
  });

  it("Redis frozen, then restarted: answered again", async () => {
    const client = await connectRedis({ url: redis.url, onError, reviveAfterMs: REVIVE_AFTER_MS });
    try {
      redis.pause();
      await new Promise((r) => setTimeout(r, REVIVE_AFTER_MS * 2)); // long enough for the watch to start it afresh while frozen
      redis.resume();
      await redis.restart();
      await answersWithin(client, 10_000);
    } finally {
      await closeRedis(client);
    }
  });

  it("a half-open connection (ready, nothing answered) is started afresh and answers again", async () => {
    const relay = await HalfOpenRelay.start(redis.port);
    const client = await connectRedis({ url: relay.url, onError, reviveAfterMs: REVIVE_AFTER_MS });
    try {
      assert.equal(await client.ping(), "PONG");
      relay.stale();
      errors.length = 0;
      const took = await answersWithin(client, 10_000);
      assert.ok(took < REVIVE_AFTER_MS * 2 + SETTLE_MS + 1_000, `answered again after ${Math.round(took)} ms`);
      assert.ok(
        errors.some((e) => /did not answer a PING within 600 ms: starting it afresh/.test(e)),
        `the revival was reported: ${errors.join("; ")}`,
      );
    } finally {
      await closeRedis(client);
      await relay.close();
    }
  });

  it("a reconnect whose handshake is never answered (node-redis sets no limit on it) is started afresh", async () => {
    // node-redis reconnects, is accepted, sends its handshake (CLIENT SETINFO) and waits for the
    // replies with no limit: open, never ready, no further event — for good, without the watch.
    const relay = await HalfOpenRelay.start(redis.port);
    const client = await connectRedis({ url: relay.url, onError, reviveAfterMs: REVIVE_AFTER_MS });
    try {
      assert.equal(await client.ping(), "PONG");
      relay.swallowNext(1);
      errors.length = 0;
      relay.cutAll();
      await revivedNotReady(client);
      assert.equal(relay.swallowed.length, 1, "the reconnect was accepted and never answered");
    } finally {
      await closeRedis(client);
      await relay.close();
    }
  });

  it("a command queued just as its connection is reset: the next handshake's replies are its, and the watch ends that", async () => {
    // The cause of the dead store connection of the chaos runs (node-redis 5.12.1). A command sent
    // while the connection is ready is written at the next setImmediate. If the connection is reset
    // in between (Redis killed with commands unread), node-redis flushes what was in flight, starts
    // to reconnect — and the write then goes onto the dead socket, leaving the command waiting for a
    // reply there. The reconnect's handshake (CLIENT SETINFO) is answered, but the replies go to that
    // command; the handshake waits for good: open, never ready, nothing answered.
    const relay = await HalfOpenRelay.start(redis.port);
    const client = await connectRedis({ url: relay.url, onError, reviveAfterMs: REVIVE_AFTER_MS });
    try {
      assert.equal(await client.ping(), "PONG");
      errors.length = 0;
      // One turn of the event loop: the reset reaches the client's socket before the write is made.
      const { queued } = await new Promise<{ queued: Promise<string | null> }>((resolve) =>
        setTimeout(() => {
          relay.resetAll();
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100); // the RST is in, unread
          resolve({ queued: client.get("k") });
        }, 0),
      );
      await assert.rejects(queued, /unknown subcommand 'SETINFO'/, "the handshake's reply went to the queued command");
      await revivedNotReady(client);
    } finally {
      await closeRedis(client);
      await relay.close();
    }
  });

  it("closed by its owner: not started again", async () => {
    const relay = await HalfOpenRelay.start(redis.port);
    const client = await connectRedis({ url: relay.url, onError, reviveAfterMs: REVIVE_AFTER_MS });
    relay.stale();
    await new Promise((r) => setTimeout(r, REVIVE_AFTER_MS * 2)); // the watch is reviving it now
    await closeRedis(client);
    await new Promise((r) => setTimeout(r, SETTLE_MS + 1_000)); // past the settle time
    assert.equal(client.isOpen, false);
    await relay.close();
  });
});
