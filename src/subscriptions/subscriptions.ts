// Subscriptions: serves subscriptions/listen and keeps the set of open listen streams (any number
// per client). close() ends each with the closing JSON-RPC result; a stream the client closes
// gives back its bus listeners, upstream resource subscriptions and keep-alive timer at once.
// Every holderCheckMs the tasks followed here are checked for a holder instance that is gone, so
// a listener learns of it without anyone polling.

import type { Logger } from "pino";
import type { MethodHandler, RequestContext } from "../methods/context.js";
import { STREAMED } from "../methods/context.js";
import { ErrorCode, RpcError } from "../protocol/errors.js";
import { declaresTasks } from "../protocol/wire.js";
import type { TaskBus } from "../tasks/taskBus.js";
import type { TaskManager } from "../tasks/taskManager.js";
import type { UpstreamPool } from "../upstream/upstreamPool.js";
import { parseListenFilter } from "./listenFilter.js";
import { ListenStream } from "./listenStream.js";
import type { UpstreamEvents } from "./upstreamEvents.js";
import { UpstreamResources } from "./upstreamResources.js";

export interface SubscriptionsDeps {
  tasks: TaskManager;
  bus: TaskBus;
  pool: UpstreamPool;
  events: UpstreamEvents;
  keepAliveMs: number;
  /** How often followed tasks are checked for a dead holder instance. */
  holderCheckMs: number;
  log: Logger;
}

export class Subscriptions {
  readonly resources: UpstreamResources;
  private readonly open = new Set<ListenStream>();
  private closing = false;
  private readonly holderCheck: NodeJS.Timeout;

  constructor(private readonly deps: SubscriptionsDeps) {
    this.resources = new UpstreamResources(deps.pool, deps.events, deps.log);
    this.holderCheck = setInterval(() => void this.checkHolders(), deps.holderCheckMs).unref();
  }

  readonly handler: MethodHandler = async (ctx: RequestContext) => {
    const filter = parseListenFilter(ctx.params, declaresTasks(ctx.capabilities));
    if (this.closing) throw shuttingDown();
    const stream = new ListenStream(ctx, { ...this.deps, resources: this.resources }, (gone) => this.open.delete(gone));
    this.open.add(stream);
    try {
      await stream.start(filter);
    } catch (error) {
      stream.dispose("setup failed");
      throw error;
    }
    if (this.closing && !stream.isDisposed) {
      // Shutdown began while this one was being set up; close() did not see it acknowledged.
      await stream.finish();
    }
    ctx.note.outcome = "listen";
    this.deps.log.debug({ event: "subscriptions.listen.opened", subscriptionId: ctx.id, open: this.open.size }, "listen stream opened");
    return STREAMED;
  };

  /** Listen streams currently open (acknowledged or being set up). */
  openCount(): number {
    return this.open.size;
  }

  /** Listen streams following `taskId` right now (bus listeners for it). */
  taskListenerCount(taskId: string): number {
    return this.deps.bus.listenerCount(taskId);
  }

  private async checkHolders(): Promise<void> {
    const followed = new Set([...this.open].flatMap((stream) => stream.followedTaskIds()));
    for (const taskId of followed) {
      await this.deps.tasks.checkHolder(taskId).catch((error: unknown) =>
        this.deps.log.warn({ event: "subscriptions.holder_check.failed", taskId, err: String(error) }, "holder check failed"),
      );
    }
  }

  /** Gateway shutdown: every stream gets its closing result, then ends. */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.holderCheck);
    this.resources.close(); // the upstream sessions end too; no unsubscribe calls
    await Promise.all([...this.open].map((stream) => stream.finish()));
    this.deps.events.close();
  }
}

const shuttingDown = () => new RpcError(ErrorCode.InternalError, "taskgate is shutting down", undefined, 503);
