// Reference-counted upstream resource subscriptions, per owner: the first listen stream of an
// owner that follows a uri sends `resources/subscribe {uri}` on that owner's shared session (the
// one of profile {}: with upstream.sessionsPer "identity" the identity's one session, where its
// calls run too), held open while subscribed; the last one to leave sends `resources/unsubscribe`.
// Per owner and uri, upstream calls run one at a time; a re-opened session of the owner gets every
// live subscription again (a new session knows nothing of earlier ones).

import type { Logger } from "pino";
import type { UpstreamPool } from "../upstream/upstreamPool.js";
import type { UpstreamEvents } from "./upstreamEvents.js";

interface UriState {
  owner: string;
  uri: string;
  /** Listeners holding this uri. */
  holders: number;
  /** What the upstream was last told successfully. */
  subscribed: boolean;
  /** Releases the owner's session while subscribed. */
  releaseSession?: (() => void) | undefined;
  /** Upstream calls for this uri, in order. */
  chain: Promise<void>;
}

export class UpstreamResources {
  private readonly states = new Map<string, UriState>();
  private closed = false;

  constructor(
    private readonly pool: UpstreamPool,
    events: UpstreamEvents,
    private readonly log: Logger,
  ) {
    const sharedKey = pool.sessionKey({});
    events.onSessionOpened((owner, key) => {
      if (key !== sharedKey) return;
      for (const state of this.states.values()) {
        if (state.owner === owner && state.subscribed) {
          state.subscribed = false;
          void this.reconcile(state);
        }
      }
    });
  }

  /** Holds `uri` for `owner`; resolves true once the upstream is subscribed, false if it refused
   *  (a false result holds nothing). */
  async acquire(owner: string, uri: string): Promise<boolean> {
    if (this.closed) return false;
    const id = `${owner} ${uri}`;
    const state = this.states.get(id) ?? { owner, uri, holders: 0, subscribed: false, chain: Promise.resolve() };
    this.states.set(id, state);
    state.holders += 1;
    await this.reconcile(state);
    if (state.subscribed) return true;
    this.release(owner, uri);
    return false;
  }

  release(owner: string, uri: string): void {
    const state = this.states.get(`${owner} ${uri}`);
    if (!state || state.holders === 0) return;
    state.holders -= 1;
    if (state.holders === 0) void this.reconcile(state);
  }

  /** Subscriptions the upstream has from taskgate right now (owner and uri pairs). */
  subscribedCount(): number {
    let count = 0;
    for (const state of this.states.values()) if (state.subscribed) count += 1;
    return count;
  }

  /** Shutdown: the sessions are about to end; no more upstream calls. */
  close(): void {
    this.closed = true;
    for (const state of this.states.values()) state.releaseSession?.();
  }

  /** Queues one step that brings the upstream in line with `holders`. */
  private reconcile(state: UriState): Promise<void> {
    state.chain = state.chain.then(async () => {
      const wanted = state.holders > 0;
      if (wanted === state.subscribed || this.closed) return;
      const method = wanted ? "resources/subscribe" : "resources/unsubscribe";
      try {
        if (wanted) state.releaseSession ??= await this.pool.hold(state.owner, {});
        await this.pool.request(state.owner, {}, method, { uri: state.uri });
        state.subscribed = wanted;
        this.log.debug({ event: "upstream.resource.subscription", method, uri: state.uri }, "upstream resource subscription changed");
      } catch (error) {
        // A failed unsubscribe leaves at most a stray upstream notification nobody listens to.
        if (!wanted) state.subscribed = false;
        this.log.warn(
          {
            event: "upstream.resource.subscription.failed",
            method,
            uri: state.uri,
            err: error instanceof Error ? error.message : String(error),
          },
          "upstream resource subscription call failed",
        );
      }
      if (!state.subscribed) {
        state.releaseSession?.();
        state.releaseSession = undefined;
      }
      const id = `${state.owner} ${state.uri}`;
      if (state.holders === 0 && !state.subscribed && this.states.get(id) === state) this.states.delete(id);
    });
    return state.chain;
  }
}
