// A Web Push subscription as a browser sends it (its PushSubscription JSON), checked: the endpoint
// must be https:// (http:// only on a loopback address, for local testing), its keys base64url.
// Subscriptions are kept in the task store (tasks/pushBook.ts), so they survive restarts and every
// instance knows them.

import { inventoryError } from "../protocol/errors.js";
import type { PushSubscription } from "../tasks/pushBook.js";
import { isObject } from "../util/json.js";

export type { PushSubscription } from "../tasks/pushBook.js";

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
