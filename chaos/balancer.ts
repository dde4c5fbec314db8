// The round-robin balancer in front of the taskgate instances, which is also the fault proxy. A TCP
// proxy on a loopback port: each new client connection goes to the next instance (no stickiness;
// the chaos clients open one connection per request, so consecutive requests of one user land on
// different instances); a refused connection (an instance that is down) is tried on the next one,
// as a load balancer's health check would. While a network fault is on, new connections get it:
//   slow: every chunk, both ways, is delayed by `delayMs` (order kept);
//   cut:  the connection is destroyed after a random number of bytes from the instance;
//   hold: bytes from the instance are held back for `holdMs`, then released at once.

import { EventEmitter } from "node:events";
import { connect, createServer, type Server, type Socket } from "node:net";
import type { Rng } from "./rng.js";

export type NetworkFault = { kind: "slow"; delayMs: number } | { kind: "cut"; share: number } | { kind: "hold"; holdMs: number };

/** Emits "splice" (the network faults it got) once a connection is joined to an instance. */
interface Story {
  accepted: number;
  got: string;
  ended?: string;
}

export class Balancer extends EventEmitter<{ splice: [NetworkFault[]] }> {
  private server: Server | undefined;
  private next = 0;
  private readonly sockets = new Set<Socket>();
  /** By the client's port, the last few connections from it: when each came, what it got, who ended it (a violation's evidence). */
  private readonly stories = new Map<number, Story[]>();
  readonly faults = new Set<NetworkFault>();
  /** Connections by instance index, and how many a fault touched. */
  readonly counts = { connections: 0, refusedRetries: 0, cut: 0, held: 0, slowed: 0 };
  port = 0;

  openSockets(): number {
    return this.open().length;
  }

  /**
   * Resolves once no connection is open through the balancer, or after `ms` (the end state then lists what stayed).
   * Connections the users dropped last may still be closing on the instances' side when the workload ends.
   */
  async settled(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    for (let open = this.open(); open.length > 0 && Date.now() < deadline; open = this.open()) {
      const left = deadline - Date.now();
      await Promise.race([
        Promise.all(open.map((s) => new Promise<void>((resolve) => s.once("close", () => resolve())))),
        new Promise<void>((resolve) => setTimeout(resolve, Math.min(left, 250)).unref()),
      ]);
    }
  }

  /** What the balancer knows of the last connection from the client's `port` accepted by `at` (ms), or undefined. */
  story(port: number, at: number): string | undefined {
    const story = this.stories.get(port)?.findLast((s) => s.accepted <= at);
    if (!story) return undefined;
    return `accepted at ${new Date(story.accepted).toISOString()}, ${story.got}, ${story.ended ?? "still open"}`;
  }

  private storyOf(client: Socket): Story | undefined {
    return client.remotePort === undefined ? undefined : this.stories.get(client.remotePort)?.at(-1);
  }

  /** Notes the first reason the balancer saw for a client connection's end. */
  private ended(client: Socket, why: string): void {
    const story = this.storyOf(client);
    if (story && !story.ended) story.ended = `${why} at ${new Date().toISOString()}`;
  }

  /** The connections still open, described (for a violation's evidence). */
  describeOpen(): string[] {
    return this.open().map((s) => `${s.remotePort}→${s.localPort} read ${s.bytesRead} B, written ${s.bytesWritten} B`);
  }

  /**
   * Sockets not destroyed yet. A destroyed one is closed already: one destroyed while its connect was
   * still pending (a client that left first) may never emit "close", so it can stay in the set.
   */
  private open(): Socket[] {
    return [...this.sockets].filter((s) => !s.destroyed);
  }

  constructor(
    private readonly instancePorts: () => number[],
    private readonly rng: Rng,
  ) {
    super();
  }

  async start(): Promise<void> {
    const server = createServer((client) => this.accept(client));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    this.port = typeof address === "object" && address ? address.port : 0;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private accept(client: Socket): void {
    this.counts.connections++;
    this.sockets.add(client);
    if (client.remotePort !== undefined) {
      const earlier = this.stories.get(client.remotePort) ?? [];
      this.stories.set(client.remotePort, [...earlier.slice(-3), { accepted: Date.now(), got: "no instance yet" }]);
    }
    client.once("close", () => {
      this.ended(client, "client closed");
      this.sockets.delete(client);
    });
    client.on("error", (error: NodeJS.ErrnoException) => {
      this.ended(client, `client error ${error.code ?? error.message}`);
      client.destroy();
    });
    client.pause();
    const ports = this.instancePorts();
    const first = this.next++ % ports.length;
    this.dial(client, ports, first, 0);
  }

  private dial(client: Socket, ports: number[], index: number, tries: number): void {
    const upstream = connect({ host: "127.0.0.1", port: ports[(index + tries) % ports.length]! });
    this.sockets.add(upstream);
    upstream.once("close", () => this.sockets.delete(upstream));
    upstream.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNREFUSED" && tries + 1 < ports.length && !client.destroyed) {
        this.counts.refusedRetries++;
        return this.dial(client, ports, index, tries + 1);
      }
      this.ended(client, `instance error ${error.code ?? error.message}`);
      upstream.destroy();
      client.destroy();
    });
    // A client that leaves while the instance has not answered the connect yet takes it along.
    const leave = () => upstream.destroy();
    client.once("close", leave);
    upstream.once("connect", () => {
      client.off("close", leave);
      if (client.destroyed) upstream.destroy();
      else this.splice(client, upstream);
    });
  }

  /** Copies bytes both ways, through whatever network faults are on now. */
  private splice(client: Socket, upstream: Socket): void {
    const faults = [...this.faults];
    const slow = faults.find((f) => f.kind === "slow");
    const hold = faults.find((f) => f.kind === "hold");
    const cut = faults.find((f) => f.kind === "cut");
    let cutAfter = Number.POSITIVE_INFINITY;
    if (cut && this.rng.chance(cut.share)) {
      cutAfter = this.rng.int(0, 600);
      this.counts.cut++;
    }
    if (slow) this.counts.slowed++;
    if (hold) this.counts.held++;
    const delay = slow?.delayMs ?? 0;
    const releaseAt = hold ? Date.now() + hold.holdMs : 0;
    const story = this.storyOf(client);
    if (story) {
      const got = faults.map((f) => (f.kind === "cut" ? `cut${Number.isFinite(cutAfter) ? ` after ${cutAfter} B` : " (spared)"}` : f.kind));
      story.got = `joined to :${upstream.remotePort} at ${new Date().toISOString()} with ${got.length ? got.join(", ") : "no fault"}`;
    }
    let fromUpstream = 0;
    const ends = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", ends);
    upstream.on("end", () => this.ended(client, `instance ended after ${fromUpstream} B`));
    upstream.on("close", () => {
      this.ended(client, `instance closed after ${fromUpstream} B`);
      ends();
    });
    forward(client, upstream, () => delay);
    forward(
      upstream,
      client,
      () => Math.max(delay, releaseAt - Date.now()),
      (chunk) => {
        fromUpstream += chunk.length;
        if (fromUpstream > cutAfter) {
          this.ended(client, `cut after ${fromUpstream} B`);
          ends();
          return false;
        }
        return true;
      },
    );
    client.resume();
    this.emit("splice", faults);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** Writes `from`'s chunks to `to` after `wait()` ms each, in order; `admit` may stop the flow. */
function forward(from: Socket, to: Socket, wait: () => number, admit: (chunk: Buffer) => boolean = () => true): void {
  let chain = Promise.resolve();
  from.on("data", (chunk: Buffer) => {
    if (!admit(chunk)) return;
    const ms = wait();
    if (ms <= 0) {
      chain = chain.then(() => {
        if (!to.destroyed) to.write(chunk);
      });
      return;
    }
    chain = chain.then(
      () =>
        new Promise<void>((resolve) =>
          setTimeout(() => {
            if (!to.destroyed) to.write(chunk);
            resolve();
          }, ms),
        ),
    );
  });
  from.on("end", () => {
    chain = chain.then(() => {
      if (!to.destroyed) to.end();
    });
  });
}
