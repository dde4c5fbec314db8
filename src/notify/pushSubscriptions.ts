// Web Push subscriptions, per owner (hash), kept in this process's memory: at most
// PER_OWNER_MAX per owner (the oldest goes) and TOTAL_MAX in all (a new owner past it is refused).
// Lost on restart; in a deployment of several instances a subscription is known to the instance
// that received it, which pushes to it for changes made on any instance (notifier.ts; see
// docs/operators.md). An endpoint must be https:// (http:// only on a loopback
// address, for local testing), its keys base64url. Each owner's identity (as signed in when it last
// subscribed) is kept with its subscriptions, so approval requests can go to approvers' browsers.

import type { Identity } from "../auth/identity.js";
import { inventoryError } from "../protocol/errors.js";
import { isObject } from "../util/json.js";

export interface PushSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export const PER_OWNER_MAX = 10;
export const TOTAL_MAX = 10_000;

const BASE64URL = /^[A-Za-z0-9_-]+=*$/;
const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** The subscription in a request body, or a 400 saying what is wrong. */
export function parseSubscription(body: unknown): PushSubscription {
  const bad = (why: string) => inventoryError("bad_request", `a push subscription ${why} (send the browser's PushSubscription JSON)`);
  if (!isObject(body) || typeof body.endpoint !== "string") throw bad("needs an endpoint");
  let url: URL;
  try {
    url = new URL(body.endpoint);
  } catch {
    throw bad("endpoint must be a URL");
  }
  if (!(url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.has(url.hostname)))) throw bad("endpoint must be https://");
  const keys = isObject(body.keys) ? body.keys : {};
  const { p256dh, auth } = keys;
  if (typeof p256dh !== "string" || typeof auth !== "string" || !BASE64URL.test(p256dh) || !BASE64URL.test(auth)) {
    throw bad("needs keys.p256dh and keys.auth (base64url)");
  }
  return { endpoint: url.href, keys: { p256dh, auth } };
}

interface OwnerSubscriptions {
  identity: Identity;
  list: PushSubscription[];
}

export class PushSubscriptions {
  private readonly byOwner = new Map<string, OwnerSubscriptions>();

  add(owner: string, identity: Identity, subscription: PushSubscription): void {
    const list = (this.byOwner.get(owner)?.list ?? []).filter((known) => known.endpoint !== subscription.endpoint);
    if (!this.byOwner.has(owner) && this.byOwner.size >= TOTAL_MAX) {
      throw inventoryError("unavailable", "taskgate holds as many push subscriptions as it keeps; try again later");
    }
    list.push(subscription);
    if (list.length > PER_OWNER_MAX) list.shift();
    this.byOwner.set(owner, { identity, list });
  }

  /** true when it was there. */
  remove(owner: string, endpoint: string): boolean {
    const known = this.byOwner.get(owner);
    const list = known?.list ?? [];
    const kept = list.filter((subscription) => subscription.endpoint !== endpoint);
    if (!known || kept.length === 0) this.byOwner.delete(owner);
    else this.byOwner.set(owner, { ...known, list: kept });
    return kept.length !== list.length;
  }

  of(owner: string): readonly PushSubscription[] {
    return this.byOwner.get(owner)?.list ?? [];
  }

  /** The owners whose identity `wanted` accepts (at most TOTAL_MAX to look through). */
  *owners(wanted: (identity: Identity, owner: string) => boolean): Generator<string> {
    for (const [owner, { identity }] of this.byOwner) if (wanted(identity, owner)) yield owner;
  }
}
