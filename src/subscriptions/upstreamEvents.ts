// UpstreamEvents: the in-process hub the upstream pool feeds with every session's notifications
// that belong to no call. Sessions belong to one identity, and so do their notifications: a
// listener names the owner it listens for, and gets list changes by kind and resource updates by
// uri from that owner's sessions only. Copies of one change arriving on several sessions of the
// owner within COALESCE_MS reach each listener once.

import { EventEmitter } from "node:events";
import type { JsonObject } from "../protocol/wire.js";

export type ListKind = "tools" | "prompts" | "resources";

const LIST_CHANGED: Record<string, ListKind> = {
  "notifications/tools/list_changed": "tools",
  "notifications/prompts/list_changed": "prompts",
  "notifications/resources/list_changed": "resources",
};
const RESOURCE_UPDATED = "notifications/resources/updated";

/**
 * An owner with sessions of several capability profiles gets a broadcast change on each. A
 * trailing window merges those copies: whatever arrives before the delivery is covered by it, so a
 * client that re-reads after it never misses a change.
 */
const COALESCE_MS = 25;

export class UpstreamEvents {
  private readonly emitter = new EventEmitter().setMaxListeners(0);
  private readonly pending = new Map<string, NodeJS.Timeout>();

  /** Called by the pool for every notification of `owner`'s session of `profileKey` not tied to a call. */
  feed(owner: string, profileKey: string, notification: { method: string; params?: JsonObject }): void {
    const { method } = notification;
    const kind = LIST_CHANGED[method];
    if (kind) {
      this.emitter.emit("upstream-list-changed", kind, profileKey); // unmerged: cache invalidation
      this.later(`list:${owner}:${kind}`);
    } else if (method === RESOURCE_UPDATED && typeof notification.params?.uri === "string") {
      this.later(`resource:${owner}:${notification.params.uri}`);
    }
  }

  /** Called by the pool when a session of `owner` and `profileKey` opened (first time or again). */
  sessionOpened(owner: string, profileKey: string): void {
    this.emitter.emit("session-opened", owner, profileKey);
  }

  onListChanged(owner: string, kind: ListKind, listener: () => void): () => void {
    return this.on(`list:${owner}:${kind}`, listener);
  }

  onResourceUpdated(owner: string, uri: string, listener: () => void): () => void {
    return this.on(`resource:${owner}:${uri}`, listener);
  }

  /** Every copy, at once, before merging (for catalog invalidation per profile). */
  onAnyListChanged(listener: (kind: ListKind, profileKey: string) => void): () => void {
    return this.on("upstream-list-changed", listener as (...args: unknown[]) => void);
  }

  onSessionOpened(listener: (owner: string, profileKey: string) => void): () => void {
    return this.on("session-opened", listener as (...args: unknown[]) => void);
  }

  /** Listeners registered now, for list kinds and for resource uris. */
  listenerCounts(): { list: number; resource: number } {
    let list = 0;
    let resource = 0;
    for (const name of this.emitter.eventNames()) {
      if (typeof name !== "string") continue;
      if (name.startsWith("list:")) list += this.emitter.listenerCount(name);
      else if (name.startsWith("resource:")) resource += this.emitter.listenerCount(name);
    }
    return { list, resource };
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
