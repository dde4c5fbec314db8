// Notifier: tells a task's owner when the task needs input, completes or fails, through what the
// operator configured (notify.webhooks, notify.webPush). It is told of the changes this instance
// wrote (TaskRecords' transitions), so in a deployment of several instances each event is notified
// once, by the instance that made it. Told synchronously, it only enqueues (DeliveryQueue): a slow
// or failing receiver never holds a task back.

import type { Logger } from "pino";
import type { NotifyOptions } from "../config/inventoryOptions.js";
import type { TaskRecord } from "../tasks/taskRecord.js";
import type { TaskTransition } from "../tasks/taskRecords.js";
import { DeliveryQueue } from "./deliveryQueue.js";
import { eventOf, notificationOf } from "./notification.js";
import { NotifyMetrics } from "./notifyMetrics.js";
import { PushSubscriptions } from "./pushSubscriptions.js";
import { webhookDelivery } from "./webhooks.js";
import { pushDelivery } from "./webPush.js";

export class Notifier {
  readonly metrics = new NotifyMetrics();
  readonly subscriptions = new PushSubscriptions();
  readonly queue: DeliveryQueue;
  private readonly log: Logger;

  constructor(
    private readonly options: NotifyOptions,
    /** The base of console links: inventory.publicUrl, else this instance's own URL. */
    private readonly baseUrl: () => string,
    log: Logger,
  ) {
    this.log = log.child({ part: "notify" });
    this.queue = new DeliveryQueue(options, this.metrics, this.log);
  }

  /** Whether anything is configured to notify. */
  get enabled(): boolean {
    return this.options.webhooks.length > 0 || this.options.webPush !== undefined;
  }

  /** The VAPID public key browsers subscribe with; undefined when Web Push is off. */
  get vapidPublicKey(): string | undefined {
    return this.options.webPush?.vapidPublicKey;
  }

  readonly transition: TaskTransition = (record, before) => {
    const event = eventOf(record, before);
    if (event === undefined) return;
    try {
      this.notify(record, event);
    } catch (error) {
      this.log.error(
        { event: "notify.crashed", taskId: record.taskId, err: error instanceof Error ? error.message : String(error) },
        "notify failed",
      );
    }
  };

  close(): void {
    this.queue.close();
  }

  private notify(record: TaskRecord, event: ReturnType<typeof eventOf> & string): void {
    const payload = notificationOf(record, event, this.baseUrl());
    const body = JSON.stringify(payload);
    const ids = { taskId: record.taskId, event };
    for (const hook of this.options.webhooks) if (hook.events.includes(event)) this.queue.push(webhookDelivery(hook, ids, body));
    const push = this.options.webPush;
    if (!push) return;
    for (const subscription of this.subscriptions.of(record.ownerHash)) {
      const gone = () => this.subscriptions.remove(record.ownerHash, subscription.endpoint);
      this.queue.push(pushDelivery(push, subscription, ids, body, gone));
    }
  }
}
