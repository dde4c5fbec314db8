// UpstreamEvents: the in-process hub the upstream pool feeds with every session's unrelated
// notifications. Listeners get list changes by kind and resource updates by uri; copies of one
// change sent to several upstream sessions within COALESCE_MS reach each listener once.

import { EventEmitter } from "node:events";
import type { JsonObject } from "../protocol/wire.js";

export type ListKind = "tools" | "prompts" | "resources";

const LIST_CHANGED: Record<string, ListKind> = {
  "notifications/tools/list_changed": "tools",
  "notifications/prompts/list_changed": "prompts",
  "notifications/resources/list_changed": "resources",
};
export const RESOURCE_UPDATED = "notifications/resources/updated";

/**
 * An upstream that broadcasts a change sends it on every session taskgate holds (one per
 * capability profile). A trailing window merges those copies: whatever arrives before the
 * delivery is covered by it, so a client that re-reads after it never misses a change.
 */
const COALESCE_MS = 25;

export class UpstreamEvents {
  private readonly emitter = new EventEmitter().setMaxListeners(0);
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private readonly received = new Map<string, number>();

  /** Called by the pool for every upstream notification not tied to a call. */
  feed(notification: { method: string; params?: JsonObject }): void {
    const { method } = notification;
    this.received.set(method, (this.received.get(method) ?? 0) + 1);
    const kind = LIST_CHANGED[method];
    if (kind) {
      this.emitter.emit("upstream-list-changed", kind); // unmerged: cache invalidation
      this.later(`list:${kind}`);
    } else if (method === RESOURCE_UPDATED && typeof notification.params?.uri === "string") {
      this.later(`resource:${notification.params.uri}`);
    }
  }

  /** Called by the pool when a session of `profileKey` opened (first time or again). */
  sessionOpened(profileKey: string): void {
    this.emitter.emit("session-opened", profileKey);
  }

  onListChanged(kind: ListKind, listener: () => void): () => void {
    return this.on(`list:${kind}`, listener);
  }

  onResourceUpdated(uri: string, listener: () => void): () => void {
    return this.on(`resource:${uri}`, listener);
  }

  /** Every copy, at once, before merging (for cache invalidation). */
  onAnyListChanged(listener: (kind: ListKind) => void): () => void {
    return this.on("upstream-list-changed", listener as (...args: unknown[]) => void);
  }

  onSessionOpened(listener: (profileKey: string) => void): () => void {
    return this.on("session-opened", listener as (...args: unknown[]) => void);
  }

  /** How many notifications of `method` the upstream sent so far (all sessions, unmerged). */
  receivedCount(method: string): number {
    return this.received.get(method) ?? 0;
  }

  /** Listeners currently registered (list kinds and resource uris), for tests and health. */
  listenerCount(): number {
    return this.emitter
      .eventNames()
      .filter((name) => typeof name === "string" && (name.startsWith("list:") || name.startsWith("resource:")))
      .reduce((sum, name) => sum + this.emitter.listenerCount(name), 0);
  }

  close(): void {
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
    this.emitter.removeAllListeners();
  }

  private on(event: string, listener: (...args: unknown[]) => void): () => void {
    this.emitter.on(event, listener);
    return () => this.emitter.off(event, listener);
  }

  private later(event: string): void {
    if (this.pending.has(event)) return;
    this.pending.set(
      event,
      setTimeout(() => {
        this.pending.delete(event);
        this.emitter.emit(event);
      }, COALESCE_MS).unref(),
    );
  }
}
