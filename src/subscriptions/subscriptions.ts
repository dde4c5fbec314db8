// Subscriptions: opens subscriptions/listen streams and keeps the set of open ones (any number per
// client). close() ends each with the closing JSON-RPC result; a stream the client closes gives
// back its bus listeners and upstream resource subscriptions at once. Every holderCheckMs the
// tasks followed here are checked for a holder instance that is gone, so a listener learns of it
// without anyone polling.

import type { Logger } from "pino";
import type { TaskBus } from "../cluster/taskBus.js";
import { shuttingDown } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/wire.js";
import type { TaskAccess } from "../tasks/taskAccess.js";
import type { TaskRecord } from "../tasks/taskRecord.js";
import type { UpstreamPool } from "../upstream/upstreamPool.js";
import { parseListenFilter } from "./listenFilter.js";
import { type ListenRequest, ListenStream } from "./listenStream.js";
import type { RelayedTaskFeed } from "./relayedTaskFeed.js";
import type { UpstreamEvents } from "./upstreamEvents.js";
import { UpstreamResources } from "./upstreamResources.js";

export interface SubscriptionsDeps {
  access: TaskAccess;
  bus: TaskBus<TaskRecord>;
  pool: UpstreamPool;
  events: UpstreamEvents;
  /** How often followed tasks are checked for a dead holder instance. */
  holderCheckMs: number;
  log: Logger;
  /** A modern backend's own tasks (relayed ids). */
  relayed?: RelayedTaskFeed | undefined;
  /** Whether the backend is modern now (no legacy sessions for its notifications). */
  noUpstreamSessions?: (() => boolean) | undefined;
}

export class Subscriptions {
  private readonly resources: UpstreamResources;
  private readonly open = new Set<ListenStream>();
  private closing = false;
  private readonly holderCheck: NodeJS.Timeout;

  constructor(private readonly deps: SubscriptionsDeps) {
    this.resources = new UpstreamResources(deps.pool, deps.events, deps.log);
    this.holderCheck = setInterval(() => void this.checkHolders(), deps.holderCheckMs).unref();
  }

  /** Opens a listen stream for `params` (throws -32602 / -32021 for a bad filter); resolves once acknowledged. */
  async listen(request: ListenRequest, params: JsonObject, declaresTasks: boolean): Promise<ListenStream> {
    const filter = parseListenFilter(params, declaresTasks);
    if (this.closing) throw shuttingDown();
    const stream = new ListenStream(request, { ...this.deps, resources: this.resources }, (gone) => this.open.delete(gone));
    this.open.add(stream);
    try {
      await stream.start(filter);
    } catch (error) {
      stream.dispose("setup failed");
      throw error;
    }
    // Shutdown began while this one was being set up; close() did not see it acknowledged.
    if (this.closing && !stream.isDisposed) stream.finish();
    this.deps.log.debug({ event: "subscriptions.listen.opened", subscriptionId: request.id, open: this.open.size }, "listen stream opened");
    return stream;
  }

  /** Listen streams currently open (acknowledged or being set up). */
  openCount(): number {
    return this.open.size;
  }

  /** What the open streams follow right now: tasks (bus listeners), list kinds and resource uris (upstream event listeners). */
  follows(): { task: number; list: number; resource: number } {
    let task = 0;
    for (const stream of this.open) task += stream.followedTaskCount;
    return { task, ...this.deps.events.listenerCounts() };
  }

  /** Resource subscriptions held upstream for the streams. */
  upstreamSubscriptionCount(): number {
    return this.resources.subscribedCount();
  }

  private async checkHolders(): Promise<void> {
    const followed = new Set([...this.open].flatMap((stream) => stream.followedTaskIds()));
    for (const taskId of followed) {
      await this.deps.access
        .checkHolder(taskId)
        .catch((error: unknown) =>
          this.deps.log.warn({ event: "subscriptions.holder_check.failed", taskId, err: String(error) }, "holder check failed"),
        );
    }
  }

  /** Gateway shutdown: every stream gets its closing result, then ends; resolves once they were
   *  handed to the HTTP layer (at most FLUSH_WAIT_MS). */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.holderCheck);
    this.resources.close(); // the upstream sessions end too; no unsubscribe calls
    const streams = [...this.open];
    for (const stream of streams) stream.finish();
    this.deps.events.close();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(streams.map((stream) => stream.messages.drained)),
      new Promise((resolve) => (timer = setTimeout(resolve, FLUSH_WAIT_MS))),
    ]);
    clearTimeout(timer);
    await new Promise((resolve) => setImmediate(resolve)); // the writer ends each response
  }
}

/** How long shutdown waits for closing results to be written. */
const FLUSH_WAIT_MS = 1_000;
