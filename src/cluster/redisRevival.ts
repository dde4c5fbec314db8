// Revives a node-redis connection that its own reconnect logic left for dead. After a Redis restart
// node-redis 5.12.1 can keep a connection open but never ready again: a command written (at its
// setImmediate) just after the socket was reset lands on the dead socket, the reconnect's handshake
// replies go to it, and the handshake waits for good, with no limit (docs/chaos.md). A half-open
// socket looks ready while nothing it sends is answered. Either way every command on it times out;
// destroying the connection empties node-redis's queues, which nothing else can reach. Contract: every
// `checkMs` the connection is looked at (and sent a PING once ready, unless it subscribes); one not ready, or not answering, for
// `reviveAfterMs` is destroyed and connected afresh (subscriptions are kept and sent again), with
// the cause reported to onError. Closing it by its owner (close/destroy) ends the watch; destroy() of
// a connection not open (e.g. being revived) does not throw and ends the watch too.

import type { RedisClientType } from "@redis/client";

/** The methods of a node-redis client the watch uses (any client type has them). */
type Watched = Pick<RedisClientType, "isOpen" | "isReady" | "ping" | "destroy" | "connect" | "close">;

export interface RevivalOptions {
  /** Names the connection in reports (credentials hidden). */
  label: string;
  /** Not ready, or no PING answer, for this long: the connection is started afresh. */
  reviveAfterMs: number;
  /** How long after destroying it a connection is connected again: longer than node-redis's longest backoff, so its old loop ends first. */
  settleMs: number;
  /** PING a ready connection (not a subscriber's: in RESP2 a subscribed connection answers PING as a message). */
  probe: boolean;
  onError: (error: Error) => void;
}

export function watchForRevival(client: Watched, options: RevivalOptions): void {
  const checkMs = Math.max(50, Math.floor(options.reviveAfterMs / 4));
  let stopped = false;
  let reviving = false;
  let unwellSince: number | undefined;
  let probing = false;
  // The owner's close/destroy end the watch (they are wrapped, so a revival in progress does not reopen it).
  const ownClose = client.close.bind(client);
  const ownDestroy = client.destroy.bind(client);
  client.close = () => {
    stopped = true;
    return ownClose();
  };
  client.destroy = () => {
    stopped = true;
    if (client.isOpen) ownDestroy(); // also ends the watch of a connection a revival holds closed for now
  };

  const revive = (why: string) => {
    reviving = true;
    unwellSince = undefined;
    options.onError(new Error(`Redis connection to ${options.label} ${why}: starting it afresh`));
    if (client.isOpen) ownDestroy();
    setTimeout(() => {
      reviving = false;
      if (stopped) return;
      client.connect().catch((error: unknown) => options.onError(error instanceof Error ? error : new Error(String(error))));
    }, options.settleMs).unref();
  };

  const check = () => {
    if (stopped || reviving || probing) return;
    if (!client.isOpen) return; // closed by its owner through node-redis itself (e.g. QUIT)
    const now = Date.now();
    if (!client.isReady) {
      unwellSince ??= now;
      if (now - unwellSince >= options.reviveAfterMs) revive(`not ready for ${options.reviveAfterMs} ms`);
      return;
    }
    if (!options.probe) {
      unwellSince = undefined;
      return;
    }
    probing = true;
    const timer = setTimeout(() => {
      probing = false;
      if (!stopped && !reviving && client.isOpen) revive(`did not answer a PING within ${options.reviveAfterMs} ms`);
    }, options.reviveAfterMs);
    timer.unref();
    client.ping().then(
      () => {
        clearTimeout(timer);
        probing = false;
        unwellSince = undefined;
      },
      () => {
        clearTimeout(timer);
        probing = false; // a failed PING means a drop node-redis itself handles; readiness is watched above
      },
    );
  };
  const interval = setInterval(() => {
    if (stopped) clearInterval(interval);
    else check();
  }, checkMs);
  interval.unref();
}
