// Notifier: tells a task's owner when the task needs input, completes or fails, and the approvers
// when a call waits for their approval, through what the operator configured (notify.webhooks,
// notify.webPush). It is told of the changes this instance wrote (TaskRecords' transitions), so
// with several instances each event is sent once, by the instance that made the change: posted to
// the webhooks, and pushed to the browsers subscribed to it, wherever they subscribed. The push
// subscriptions live in the task store (TaskStore.push), so a restart keeps them and the writing
// instance finds them (one store read per event; every book for an approval request). It only
// enqueues (DeliveryQueue): a slow or failing receiver never holds a task back, and a failing store
// read is logged, the task going on. Who may decide an approval is the access layer's rule, handed
// in (`mayApprove`), so the push goes to exactly those who could decide it.

import type { Logger } from "pino";
import type { Identity } from "../auth/identity.js";
import type { NotifyOptions } from "../config/inventoryOptions.js";
import { inventoryError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/wire.js";
import { type PushBook, PushBooksFullError, type PushSubscription, type PushSubscriptionStore } from "../tasks/pushBook.js";
import type { StoredApproval, TaskRecord } from "../tasks/taskRecord.js";
import type { TaskTransition } from "../tasks/taskRecords.js";
import { withDeadline } from "../util/timeLimit.js";
import { DeliveryQueue } from "./deliveryQueue.js";
import { APPROVAL_REQUESTED, approvalNotificationOf, approvalRequested, eventOf, notificationOf } from "./notification.js";
import { NotifyMetrics } from "./notifyMetrics.js";
import { webhookDelivery } from "./webhooks.js";
import { pushDelivery, type WebPushOptions } from "./webPush.js";

type HookEvent = NotifyOptions["webhooks"][number]["events"][number];
type Send = (event: HookEvent, payload: JsonObject, approval?: StoredApproval) => void;

export class Notifier {
  readonly metrics = new NotifyMetrics();
  readonly queue: DeliveryQueue;
  private readonly log: Logger;
  /** Store reads for pushes under way (settled() waits for them too). */
  private readonly looking = new Set<Promise<void>>();

  constructor(
    private readonly options: NotifyOptions,
    /** The task store's push subscriptions. */
    private readonly subscriptions: PushSubscriptionStore,
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

  /** Keeps the caller's subscription (at most notify.pushSubscriptionsPerIdentity; the oldest goes). */
  async subscribe(owner: string, identity: Identity, subscription: PushSubscription): Promise<void> {
    try {
      await this.subscriptions.add(owner, identity, subscription, this.options.pushSubscriptionsPerIdentity);
    } catch (error) {
      if (error instanceof PushBooksFullError) throw inventoryError("unavailable", error.message);
      throw error;
    }
  }

  /** true when the caller had it. */
  unsubscribe(owner: string, endpoint: string): Promise<boolean> {
    return this.subscriptions.remove(owner, endpoint);
  }

  /** Told by the instance that wrote the change (TaskRecords): each event is sent once in the cluster. */
  readonly transition: TaskTransition = (record, before) => {
    const push = this.options.webPush;
    if (this.options.webhooks.length === 0 && push === undefined) return;
    this.guarded(record, () =>
      this.toEach(record, before.status, before.approval?.approvalId, (event, payload, approval) => {
        this.hook(event, payload);
        if (push !== undefined) this.pushTo(push, record, event, payload, approval);
      }),
    );
  };

  /** Resolves once no store read for a push is under way and nothing is queued, retrying or in flight. */
  async settled(): Promise<void> {
    do {
      while (this.looking.size > 0) await Promise.allSettled([...this.looking]);
      await this.queue.settled(); // a delivery told "gone" starts a store change: wait for that too
    } while (this.looking.size > 0);
  }

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

  /** Shutdown: the pushes being looked up are queued, and what is queued gets its last send, all within `limitMs`. */
  async flush(limitMs: number): Promise<void> {
    const until = Date.now() + limitMs;
    if (this.looking.size > 0) await withDeadline(Promise.allSettled([...this.looking]), limitMs, []);
    await this.queue.flush(Math.max(0, until - Date.now()));
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

  /** To the browsers of the task's owner, or of those who may decide `approval`. */
  private pushTo(push: WebPushOptions, record: TaskRecord, event: HookEvent, payload: JsonObject, approval?: StoredApproval): void {
    const body = JSON.stringify(payload);
    const ids = { taskId: String(payload.taskId), event };
    const books = async (): Promise<PushBook[]> => {
      if (approval === undefined) {
        const book = await this.subscriptions.of(record.ownerHash);
        return book === undefined ? [] : [book];
      }
      return (await this.subscriptions.all()).filter((book) => this.mayApprove(book.identity, approval));
    };
    const lookup = books().then((found) => {
      for (const { owner, subscriptions } of found) {
        for (const subscription of subscriptions) {
          const gone = () => this.track(this.subscriptions.remove(owner, subscription.endpoint), record);
          this.queue.push(pushDelivery(push, subscription, ids, body, gone));
        }
      }
    });
    this.track(lookup, record);
  }

  /** A store read or change for pushes: settled() waits for it; its failure is logged. */
  private track(work: Promise<unknown>, record: TaskRecord): void {
    const tracked = work
      .then(() => undefined)
      .catch((error: unknown) => this.storeFailed(record, error))
      .finally(() => this.looking.delete(tracked));
    this.looking.add(tracked);
  }

  private storeFailed(record: TaskRecord, error: unknown): void {
    this.log.warn(
      { event: "notify.store_failed", taskId: record.taskId, err: error instanceof Error ? error.message : String(error) },
      "push subscriptions could not be read or changed in the task store; this push is not sent",
    );
  }
}
