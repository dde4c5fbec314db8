// Signed webhooks: each delivery a JSON POST whose `X-Taskgate-Signature` header is
// `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the webhook's secret>` — the receiver
// recomputes it and refuses an old `t` (replay). A 2xx answer is delivered; anything else (or no
// answer within notify.timeoutMs) is retried by the queue; a 4xx other than 408/429 is not retried.

import { createHmac } from "node:crypto";
import type { NotifyOptions } from "../config/inventoryOptions.js";
import { type Delivery, PermanentFailure } from "./deliveryQueue.js";

export type Webhook = NotifyOptions["webhooks"][number];

export function signature(body: string, secret: string, unixSeconds: number): string {
  const mac = createHmac("sha256", secret).update(`${unixSeconds}.${body}`, "utf8").digest("hex");
  return `t=${unixSeconds},v1=${mac}`;
}

export function webhookDelivery(hook: Webhook, payload: { taskId: string; event: string }, body: string): Delivery {
  return {
    channel: "webhook",
    target: new URL(hook.url).origin,
    taskId: payload.taskId,
    event: payload.event,
    async send(signal) {
      // Signed at each attempt: a retry carries a fresh timestamp.
      const response = await fetch(hook.url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "User-Agent": "taskgate-webhook",
          "X-Taskgate-Signature": signature(body, hook.secret, Math.floor(Date.now() / 1000)),
        },
        body,
        signal,
        redirect: "manual",
      });
      await response.body?.cancel();
      if (response.ok) return;
      const retriable = response.status >= 500 || response.status === 408 || response.status === 429;
      const why = `the webhook answered HTTP ${response.status}`;
      throw retriable ? new Error(why) : new PermanentFailure(why);
    },
  };
}
