// One open subscriptions/listen stream: the messages of its SSE response. Contract: the
// acknowledgement is the first message and lists exactly what is honoured; each followed task's
// current state comes right after it, then one message per change of status or of open questions
// until a terminal one (progress-only updates are not pushed); every message carries the
// subscriptionId. finish() (server shutdown) sends the closing JSON-RPC result and ends the stream.
// dispose() releases every bus listener and upstream resource hold the stream took.

import type { Logger } from "pino";
import type { TaskBus } from "../cluster/taskBus.js";
import { ErrorCode, RpcError } from "../protocol/errors.js";
import { SHUTDOWN } from "../protocol/reasons.js";
import { notificationMessage, resultMessage } from "../protocol/reply.js";
import type { RequestNote } from "../protocol/requestNote.js";
import { type JsonObject, META, type RequestId, type TaskStatus, TERMINAL_STATUSES } from "../protocol/wire.js";
import { BackendTasks } from "../tasks/backendTasks.js";
import type { TaskAccess } from "../tasks/taskAccess.js";
import type { TaskRecord } from "../tasks/taskRecord.js";
import { detailedTask } from "../tasks/taskView.js";
import type { UpstreamPool } from "../upstream/upstreamPool.js";
import { AsyncQueue } from "../util/asyncQueue.js";
import { isObject } from "../util/json.js";
import type { ListenFilter } from "./listenFilter.js";
import type { RelayedFollow, RelayedTaskFeed } from "./relayedTaskFeed.js";
import type { ListKind, UpstreamEvents } from "./upstreamEvents.js";
import type { UpstreamResources } from "./upstreamResources.js";

export interface ListenDeps {
  access: TaskAccess;
  bus: TaskBus<TaskRecord>;
  pool: UpstreamPool;
  events: UpstreamEvents;
  resources: UpstreamResources;
  log: Logger;
  /** A modern backend's own tasks (relayed ids), when the backend is one. */
  relayed?: RelayedTaskFeed | undefined;
  /** Whether the backend is modern now: list and resource notifications are then not taken from legacy sessions. */
  noUpstreamSessions?: (() => boolean) | undefined;
}

/** The listen request a stream answers. */
export interface ListenRequest {
  id: RequestId;
  ownerHash: string;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
  note: RequestNote;
}

interface Follow {
  /** Version of the last record seen for this task (-1: none yet). */
  last: number;
  /** Status and open input keys of the last frame sent: a frame goes out only when these change. */
  shape?: string;
  /** Bus events that arrived before the current state was sent; undefined once live. */
  queue?: TaskRecord[] | undefined;
  off: () => void;
}

const LIST_KINDS: Array<[keyof ListenFilter & `${ListKind}ListChanged`, ListKind]> = [
  ["toolsListChanged", "tools"],
  ["promptsListChanged", "prompts"],
  ["resourcesListChanged", "resources"],
];

export class ListenStream {
  readonly id: RequestId;
  /** The stream's messages, for the HTTP layer to write. */
  readonly messages = new AsyncQueue<JsonObject>();
  private readonly follows = new Map<string, Follow>();
  private readonly cleanups: Array<() => void> = [];
  /** Messages raised before the acknowledgement went out. */
  private early: JsonObject[] | undefined = [];
  private acknowledged = false;
  private disposed = false;

  constructor(
    private readonly request: ListenRequest,
    private readonly deps: ListenDeps,
    private readonly onDisposed: (stream: ListenStream) => void,
  ) {
    this.id = request.id;
    // The client may leave while we set up: whatever was taken by then is given back.
    if (request.signal.aborted) this.dispose("client closed the stream");
    else request.signal.addEventListener("abort", () => this.dispose("client closed the stream"), { once: true });
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  /** Tasks this stream still follows (not yet terminal). */
  followedTaskIds(): string[] {
    return [...this.follows.keys()];
  }

  /** How many tasks this stream still follows (each one a bus listener). */
  get followedTaskCount(): number {
    return this.follows.size;
  }

  /** Sets everything up, then sends the acknowledgement. */
  async start(filter: ListenFilter): Promise<void> {
    const { access, bus, events, resources } = this.deps;
    const honoured: JsonObject = {};

    const relayed = await this.followRelayed(filter.taskIds.filter((id) => BackendTasks.isRelayed(id)));
    if (this.disposed) return;
    // Tasks: follow on the bus first, then read the current state, so no change falls between.
    for (const taskId of filter.taskIds.filter((id) => !BackendTasks.isRelayed(id))) {
      this.follows.set(taskId, { last: -1, queue: [], off: bus.subscribe(taskId, (record) => this.onRecord(taskId, record)) });
    }
    const current = new Map<string, TaskRecord>();
    for (const taskId of filter.taskIds) {
      try {
        current.set(taskId, await access.get(this.request.ownerHash, taskId));
      } catch (error) {
        // Unknown, expired or someone else's: silently not honoured (never revealed).
        if (!(error instanceof RpcError && error.code === ErrorCode.InvalidParams)) throw error;
        this.unfollow(taskId);
      }
      if (this.disposed) return;
    }
    if (filter.asked.taskIds) honoured.taskIds = [...relayed.keys(), ...current.keys()];

    // Upstream-fed kinds: only what the upstream offers and can actually tell us about.
    const wantsUpstream =
      !this.deps.noUpstreamSessions?.() && (LIST_KINDS.some(([field]) => filter[field]) || filter.asked.resourceSubscriptions);
    const upstream = wantsUpstream ? await this.upstreamOffers() : undefined;
    if (this.disposed) return;
    for (const [field, kind] of LIST_KINDS) {
      if (!filter[field] || !upstream?.listChanged[kind]) continue;
      honoured[field] = true;
      this.hold(
        events.onListChanged(this.request.ownerHash, kind, () =>
          this.emit(notificationMessage(`notifications/${kind}/list_changed`, this.tag())),
        ),
      );
    }
    if (filter.asked.resourceSubscriptions && upstream?.subscribe) {
      const held: string[] = [];
      for (const uri of filter.resourceSubscriptions) {
        // Listen before subscribing upstream: an update right after the subscription is kept.
        const off = events.onResourceUpdated(this.request.ownerHash, uri, () =>
          this.emit(notificationMessage("notifications/resources/updated", { uri, ...this.tag() })),
        );
        const acquired = await resources.acquire(this.request.ownerHash, uri);
        this.hold(off);
        if (acquired) this.hold(() => resources.release(this.request.ownerHash, uri));
        if (this.disposed) return;
        if (acquired) held.push(uri);
      }
      honoured.resourceSubscriptions = held;
    }

    // Nothing was sent before this point; the acknowledgement is the first message.
    this.acknowledged = true;
    this.messages.push(notificationMessage("notifications/subscriptions/acknowledged", { ...this.tag(), notifications: honoured }));
    for (const [, follow] of relayed) {
      this.messages.push(notificationMessage("notifications/tasks", { ...this.tag(), ...follow.current }));
      if (!TERMINAL_STATUSES.has(follow.current.status as TaskStatus)) {
        this.hold(follow.follow((task) => this.emit(notificationMessage("notifications/tasks", { ...this.tag(), ...task }))));
      }
    }
    for (const [taskId, record] of current) {
      const follow = this.follows.get(taskId);
      if (!follow) continue;
      const queued = follow.queue ?? [];
      follow.queue = undefined;
      this.deliver(taskId, follow, record);
      for (const later of queued.sort((a, b) => a.version - b.version)) this.deliver(taskId, follow, later);
    }
    const early = this.early ?? [];
    this.early = undefined;
    for (const frame of early) this.messages.push(frame);
    this.request.note.honoured = honoured;
  }

  /** Server teardown: the JSON-RPC result to the listen request, then the end of the stream. */
  finish(): void {
    if (this.acknowledged && !this.disposed) this.messages.push(resultMessage(this.id, { resultType: "complete", ...this.tag() }));
    this.dispose(SHUTDOWN.abortReason);
  }

  /** Gives back everything this stream holds; safe to call more than once. */
  dispose(why: string): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const taskId of [...this.follows.keys()]) this.unfollow(taskId);
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    this.messages.end();
    this.deps.log.debug({ event: "subscriptions.listen.closed", subscriptionId: this.id, why }, "listen stream closed");
    this.onDisposed(this);
  }

  /** A modern backend's own tasks this stream may follow (the owner's): their follows, by id. */
  private async followRelayed(taskIds: string[]): Promise<Map<string, RelayedFollow>> {
    const follows = new Map<string, RelayedFollow>();
    const feed = this.deps.relayed;
    if (!feed) return follows;
    for (const taskId of taskIds) {
      const follow = await feed.open(this.request.ownerHash, taskId);
      if (follow) follows.set(taskId, follow);
    }
    return follows;
  }

  /** Keeps `cleanup` for dispose(); runs it at once if the stream is already gone. */
  private hold(cleanup: () => void): void {
    if (this.disposed) cleanup();
    else this.cleanups.push(cleanup);
  }

  private tag(): { _meta: JsonObject } {
    return { _meta: { [META.subscriptionId]: this.id } };
  }

  private emit(frame: JsonObject): void {
    if (this.disposed) return;
    if (this.early) this.early.push(frame);
    else this.messages.push(frame);
  }

  private onRecord(taskId: string, record: TaskRecord): void {
    const follow = this.follows.get(taskId);
    if (!follow || this.disposed) return;
    if (follow.queue) follow.queue.push(record);
    else this.deliver(taskId, follow, record);
  }

  private deliver(taskId: string, follow: Follow, record: TaskRecord): void {
    if (this.follows.get(taskId) !== follow || record.version <= follow.last) return;
    follow.last = record.version;
    // Status changes (and questions asked or answered) are pushed; progress-only updates are not.
    const shape = `${record.status}:${Object.keys(record.inputRequests ?? {})
      .sort()
      .join(",")}`;
    if (shape === follow.shape) return;
    follow.shape = shape;
    this.messages.push(notificationMessage("notifications/tasks", { ...this.tag(), ...detailedTask(record) }));
    if (TERMINAL_STATUSES.has(record.status)) this.unfollow(taskId); // it will never change again
  }

  private unfollow(taskId: string): void {
    this.follows.get(taskId)?.off();
    this.follows.delete(taskId);
  }

  private async upstreamOffers(): Promise<{ listChanged: Record<ListKind, boolean>; subscribe: boolean } | undefined> {
    try {
      // The owner's own session carries its notifications: keep it open while this stream lives.
      const release = await this.deps.pool.hold(this.request.ownerHash, {});
      this.hold(release);
      const info = await this.deps.pool.info(this.request.ownerHash);
      const caps = info.capabilities;
      const flag = (kind: string, key: string) => {
        const offered = caps[kind];
        return info.notificationStream && isObject(offered) && offered[key] === true;
      };
      return {
        listChanged: {
          tools: flag("tools", "listChanged"),
          prompts: flag("prompts", "listChanged"),
          resources: flag("resources", "listChanged"),
        },
        subscribe: flag("resources", "subscribe"),
      };
    } catch (error) {
      this.deps.log.warn(
        { event: "subscriptions.upstream.unavailable", err: String(error) },
        "upstream unreachable: its notifications are not honoured",
      );
      return undefined;
    }
  }
}
