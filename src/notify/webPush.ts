// Web Push (RFC 8030) with VAPID (RFC 8292) and the aes128gcm payload encryption (RFC 8291), all
// made by the `web-push` package; the request is sent here (fetch, with the queue's time limit) so
// every wait has its limit. The push service answering 404 or 410 means the subscription is gone:
// it is removed and not retried. The package is loaded at the first push: most deployments send none.

import type { NotifyOptions } from "../config/inventoryOptions.js";
import { type Delivery, PermanentFailure } from "./deliveryQueue.js";
import type { PushSubscription } from "./pushSubscriptions.js";

export type WebPushOptions = NonNullable<NotifyOptions["webPush"]>;

/** How long a push service keeps an undelivered message (seconds). */
const PUSH_TTL_S = 3_600;

export function pushDelivery(
  options: WebPushOptions,
  subscription: PushSubscription,
  payload: { taskId: string; event: string },
  body: string,
  gone: () => void,
): Delivery {
  return {
    channel: "webpush",
    target: new URL(subscription.endpoint).host,
    taskId: payload.taskId,
    event: payload.event,
    async send(signal) {
      const { default: webpush } = await import("web-push");
      const details = webpush.generateRequestDetails(subscription, body, {
        vapidDetails: { subject: options.subject, publicKey: options.vapidPublicKey, privateKey: options.vapidPrivateKey },
        TTL: PUSH_TTL_S,
        contentEncoding: "aes128gcm",
        urgency: payload.event === "input_required" ? "high" : "normal",
      });
      const response = await fetch(details.endpoint, {
        method: details.method,
        headers: details.headers as Record<string, string>,
        ...(details.body ? { body: new Uint8Array(details.body) } : {}),
        signal,
        redirect: "manual",
      });
      await response.body?.cancel();
      if (response.ok) return;
      if (response.status === 404 || response.status === 410) {
        gone();
        throw new PermanentFailure(`the push service says the subscription is gone (HTTP ${response.status}); removed`);
      }
      const why = `the push service answered HTTP ${response.status}`;
      throw response.status >= 500 || response.status === 429 ? new Error(why) : new PermanentFailure(why);
    },
  };
}
