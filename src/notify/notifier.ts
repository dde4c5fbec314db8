// Notifier: tells a task's owner when the task needs input, completes or fails, and the approvers
// when a call waits for their approval, through what the operator configured (notify.webhooks,
// notify.webPush). It is told of the changes this instance wrote (TaskRecords' transitions), so in
// a deployment of several instances each event is notified once, by the instance that made it (an
// approval by the one holding the call). Told synchronously, it only enqueues (DeliveryQueue): a
// slow or failing receiver never holds a task back. Who may decide an approval is the access
// layer's rule, handed in (`mayApprove`), so the push goes to exactly those who could decide it.

import type { Logger } from "pino";
import type { Identity } from "../auth/identity.js";
import type { NotifyOptions } from "../config/inventoryOptions.js";
import type { JsonObject } from "../protocol/wire.js";
import type { StoredApproval, TaskRecord } from "../tasks/taskRecord.js";
import type { TaskTransition } from "../tasks/taskRecords.js";
import { DeliveryQueue } from "./deliveryQueue.js";
import { APPROVAL_REQUESTED, approvalNotificationOf, approvalRequested, eventOf, notificationOf } from "./notification.js";
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
    /** Whether `identity` may decide `approval` (its approver role, not its caller). */
    private readonly mayApprove: (identity: Identity, approval: StoredApproval) => boolean = () => false,
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
    const event = eventOf(record, before.status);
    const approval = approvalRequested(record, before);
    if (event === undefined && approval === undefined) return;
    try {
      if (event !== undefined) this.notifyOwner(record, event);
      if (approval !== undefined) this.notifyApprovers(record, approval);
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

  private notifyOwner(record: TaskRecord, event: ReturnType<typeof eventOf> & string): void {
    this.send(record.taskId, event, notificationOf(record, event, this.baseUrl()), [record.ownerHash]);
  }

  private notifyApprovers(record: TaskRecord, approval: StoredApproval): void {
    const approvers = this.subscriptions.owners((identity) => this.mayApprove(identity, approval));
    this.send(record.taskId, APPROVAL_REQUESTED, approvalNotificationOf(record, approval, this.baseUrl()), approvers);
  }

  /** To the webhooks listing `event`, and to the push subscriptions of `owners`. */
  private send(taskId: string, event: NotifyOptions["webhooks"][number]["events"][number], payload: JsonObject, owners: Iterable<string>) {
    const body = JSON.stringify(payload);
    const ids = { taskId, event };
    for (const hook of this.options.webhooks) if (hook.events.includes(event)) this.queue.push(webhookDelivery(hook, ids, body));
    const push = this.options.webPush;
    if (!push) return;
    for (const owner of owners) {
      for (const subscription of this.subscriptions.of(owner)) {
        const gone = () => this.subscriptions.remove(owner, subscription.endpoint);
        this.queue.push(pushDelivery(push, subscription, ids, body, gone));
      }
    }
  }
}
