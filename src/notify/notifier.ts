// Notifier: tells a task's owner when the task needs input, completes or fails, and the approvers
// when a call waits for their approval, through what the operator configured (notify.webhooks,
// notify.webPush). Webhooks: it is told of the changes this instance wrote (TaskRecords'
// transitions), so with several instances each event is posted once, by the instance that made it.
// Web Push: a subscription is kept by the instance the browser subscribed on, so every instance
// hears every change on the task bus (subscribeAll; the record says what it changed from) and
// pushes to the browsers subscribed on it: each browser once, wherever the change was made. It
// only enqueues (DeliveryQueue): a slow or failing receiver never holds a task back. Who may decide
// an approval is the access layer's rule, handed in (`mayApprove`), so the push goes to exactly
// those who could decide it.

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
import { pushDelivery, type WebPushOptions } from "./webPush.js";

type HookEvent = NotifyOptions["webhooks"][number]["events"][number];
type Send = (event: HookEvent, payload: JsonObject, approval?: StoredApproval) => void;

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

  /** Told by the instance that wrote the change (TaskRecords): the webhooks, so each event is posted once in the cluster. */
  readonly transition: TaskTransition = (record, before) => {
    if (this.options.webhooks.length === 0) return;
    this.guarded(record, () =>
      this.toEach(record, before.status, before.approval?.approvalId, (event, payload) => this.hook(event, payload)),
    );
  };

  /**
   * Every record on the task bus, which every instance hears once per write (from whichever
   * instance wrote it): pushed to the browsers subscribed here. Subscriptions live on the instance
   * that received them, so each browser is pushed each event once, by that instance.
   */
  readonly announced = (record: TaskRecord): void => {
    const from = record.changedFrom;
    const push = this.options.webPush;
    if (from === undefined || push === undefined) return;
    this.guarded(record, () =>
      this.toEach(record, from.status, from.approvalId, (event, payload, approval) => {
        const owners = approval ? this.subscriptions.owners((identity) => this.mayApprove(identity, approval)) : [record.ownerHash];
        this.pushTo(push, owners, event, payload);
      }),
    );
  };

  /** Calls `send` with each notification this change is: the owner's event, the approvers' request. */
  private toEach(record: TaskRecord, statusBefore: TaskRecord["status"], approvalIdBefore: string | undefined, send: Send): void {
    const event = eventOf(record, statusBefore);
    if (event !== undefined) send(event, notificationOf(record, event, this.baseUrl()));
    const approval = approvalRequested(record, approvalIdBefore);
    if (approval !== undefined) send(APPROVAL_REQUESTED, approvalNotificationOf(record, approval, this.baseUrl()), approval);
  }

  private guarded(record: TaskRecord, notify: () => void): void {
    try {
      notify();
    } catch (error) {
      this.log.error(
        { event: "notify.crashed", taskId: record.taskId, err: error instanceof Error ? error.message : String(error) },
        "notify failed",
      );
    }
  }

  close(): void {
    this.queue.close();
  }

  /** To the webhooks listing `event`. */
  private hook(event: HookEvent, payload: JsonObject): void {
    const body = JSON.stringify(payload);
    const ids = { taskId: String(payload.taskId), event };
    for (const hook of this.options.webhooks) if (hook.events.includes(event)) this.queue.push(webhookDelivery(hook, ids, body));
  }

  /** To the push subscriptions of `owners` known here. */
  private pushTo(push: WebPushOptions, owners: Iterable<string>, event: HookEvent, payload: JsonObject): void {
    const body = JSON.stringify(payload);
    const ids = { taskId: String(payload.taskId), event };
    for (const owner of owners) {
      for (const subscription of this.subscriptions.of(owner)) {
        const gone = () => this.subscriptions.remove(owner, subscription.endpoint);
        this.queue.push(pushDelivery(push, subscription, ids, body, gone));
      }
    }
  }
}
