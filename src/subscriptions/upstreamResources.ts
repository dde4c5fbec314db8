// Reference-counted upstream resource subscriptions: the first listener of a uri sends
// `resources/subscribe {uri}` upstream (base session, profile {}), the last one to leave sends
// `resources/unsubscribe`. Per uri, upstream calls run one at a time; a re-opened base session
// gets every live subscription again.

import type { Logger } from "pino";
import type { UpstreamPool } from "../upstream/upstreamPool.js";
import { profileKey } from "../upstream/capabilityProfile.js";
import type { UpstreamEvents } from "./upstreamEvents.js";

interface UriState {
  /** Listeners holding this uri. */
  holders: number;
  /** What the upstream was last told successfully. */
  subscribed: boolean;
  /** Upstream calls for this uri, in order. */
  chain: Promise<void>;
}

const BASE_PROFILE = profileKey({});

export class UpstreamResources {
  private readonly uris = new Map<string, UriState>();
  private closed = false;

  constructor(
    private readonly pool: UpstreamPool,
    events: UpstreamEvents,
    private readonly log: Logger,
  ) {
    events.onSessionOpened((key) => {
      if (key !== BASE_PROFILE) return;
      // A new base session knows nothing of earlier subscriptions.
      for (const [uri, state] of this.uris) {
        if (state.subscribed) {
          state.subscribed = false;
          this.reconcile(uri, state);
        }
      }
    });
  }

  /** Holds `uri`; resolves true once the upstream is subscribed, false if it refused. A false
   *  result holds nothing (no release needed). */
  async acquire(uri: string): Promise<boolean> {
    if (this.closed) return false;
    const state = this.uris.get(uri) ?? { holders: 0, subscribed: false, chain: Promise.resolve() };
    this.uris.set(uri, state);
    state.holders += 1;
    await this.reconcile(uri, state);
    if (state.subscribed) return true;
    this.release(uri);
    return false;
  }

  release(uri: string): void {
    const state = this.uris.get(uri);
    if (!state || state.holders === 0) return;
    state.holders -= 1;
    if (state.holders === 0) void this.reconcile(uri, state);
  }

  /** Listeners holding `uri` right now. */
  holders(uri: string): number {
    return this.uris.get(uri)?.holders ?? 0;
  }

  /** Whether the upstream currently has a subscription from taskgate for `uri`. */
  isSubscribed(uri: string): boolean {
    return this.uris.get(uri)?.subscribed ?? false;
  }

  /** Shutdown: the sessions are about to end; no more upstream calls. */
  close(): void {
    this.closed = true;
  }

  /** Queues one step that brings the upstream in line with `holders`. */
  private reconcile(uri: string, state: UriState): Promise<void> {
    state.chain = state.chain.then(async () => {
      const wanted = state.holders > 0;
      if (wanted === state.subscribed || this.closed) return;
      const method = wanted ? "resources/subscribe" : "resources/unsubscribe";
      try {
        await this.pool.request({}, method, { uri });
        state.subscribed = wanted;
        this.log.debug({ event: "upstream.resource.subscription", method, uri }, "upstream resource subscription changed");
      } catch (error) {
        // A failed unsubscribe leaves at most a stray upstream notification nobody listens to.
        if (!wanted) state.subscribed = false;
        this.log.warn({ event: "upstream.resource.subscription.failed", method, uri, err: String(error) }, "upstream resource subscription call failed");
      }
      if (state.holders === 0 && !state.subscribed && this.uris.get(uri) === state) this.uris.delete(uri);
    });
    return state.chain;
  }
}
