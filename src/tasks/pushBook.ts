// Web Push subscriptions as the task store keeps them, so they outlive a restart and every instance
// of a cluster knows them: one book per owner (ownerHash) with the owner's identity (as signed in
// when it last subscribed, so approval requests can go to approvers' browsers) and its
// subscriptions, oldest first, at most `perOwner` of them (one more drops the oldest; the endpoint
// of one already there replaces it). A store holds at most PUSH_BOOKS_MAX books: a new owner past
// that is refused (PushBooksFullError). Each backend keeps a book as one JSON text in a slot it
// can compare-and-set (BookSlot), and PushBooks does the rest the same way for all of them: two
// instances changing one book at once lose neither change.

import { setTimeout as sleep } from "node:timers/promises";
import type { Identity } from "../auth/identity.js";
import { KeyedQueue } from "./stores/keyedQueue.js";

export interface PushSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export interface PushBook {
  owner: string;
  identity: Identity;
  /** Oldest first. */
  subscriptions: PushSubscription[];
}

/** Owners with push subscriptions one store keeps (about: two instances adding the last one at once may both succeed). */
export const PUSH_BOOKS_MAX = 10_000;

/** A new owner's subscription when the store already keeps PUSH_BOOKS_MAX books. */
export class PushBooksFullError extends Error {
  override readonly name = "PushBooksFullError";
}

/** The push subscription operations every TaskStore offers (TaskStore.push). */
export interface PushSubscriptionStore {
  /** Adds (or renews, by endpoint) one subscription of `owner`, dropping the oldest past `perOwner`. */
  add(owner: string, identity: Identity, subscription: PushSubscription, perOwner: number): Promise<void>;
  /** Removes the owner's subscription with this endpoint; true when it was there. */
  remove(owner: string, endpoint: string): Promise<boolean>;
  /** The owner's book, or undefined when it has no subscription. */
  of(owner: string): Promise<PushBook | undefined>;
  /** Every owner's book (at most PUSH_BOOKS_MAX). */
  all(): Promise<PushBook[]>;
}

export type SlotWrite = "written" | "changed" | "full";

/** How a backend stores the books. */
export interface BookSlots {
  /** The owner's book text, or undefined. */
  read(owner: string): Promise<string | undefined>;
  /**
   * Writes `next` (undefined: deletes the book) if the stored text is still `seen` (undefined: none),
   * else "changed"; "full" when it would add a book past `max` books.
   */
  write(owner: string, seen: string | undefined, next: string | undefined, max: number): Promise<SlotWrite>;
  /** Every book's text. */
  all(): Promise<string[]>;
}

/** How often a change is tried when other instances keep changing the book in between. */
const ATTEMPTS = 10;
/** The longest pause before another try; a random part of it, so instances racing one book spread out. */
const MAX_PAUSE_MS = 50;

export class PushBooks implements PushSubscriptionStore {
  /** Changes of one owner's book on this instance are queued, so they never race each other here. */
  private readonly queue = new KeyedQueue();

  constructor(
    /** How errors name the store. */
    private readonly name: string,
    private readonly slots: BookSlots,
    /** Runs an operation of the store (its closed check and its wait on close()). */
    private readonly run: <T>(operation: () => Promise<T>) => Promise<T>,
  ) {}

  add(owner: string, identity: Identity, subscription: PushSubscription, perOwner: number): Promise<void> {
    if (!Number.isInteger(perOwner) || perOwner < 1) return Promise.reject(new RangeError("perOwner must be a positive integer"));
    return this.run(async () => {
      await this.change(owner, (book) => {
        const kept = (book?.subscriptions ?? []).filter((known) => known.endpoint !== subscription.endpoint);
        const list = [...kept, subscription].slice(-perOwner);
        return { owner, identity, subscriptions: list };
      });
    });
  }

  remove(owner: string, endpoint: string): Promise<boolean> {
    return this.run(async () => {
      let removed = false;
      await this.change(owner, (book) => {
        const kept = (book?.subscriptions ?? []).filter((known) => known.endpoint !== endpoint);
        removed = book !== undefined && kept.length !== book.subscriptions.length;
        if (!removed || !book) return book;
        return kept.length === 0 ? undefined : { ...book, subscriptions: kept };
      });
      return removed;
    });
  }

  of(owner: string): Promise<PushBook | undefined> {
    return this.run(async () => {
      const text = await this.slots.read(owner);
      return text === undefined ? undefined : (JSON.parse(text) as PushBook);
    });
  }

  all(): Promise<PushBook[]> {
    return this.run(async () => (await this.slots.all()).map((text) => JSON.parse(text) as PushBook));
  }

  /** Reads the book, applies `change`, compare-and-sets the result; again if another instance wrote meanwhile. */
  private change(owner: string, change: (book: PushBook | undefined) => PushBook | undefined): Promise<void> {
    return this.queue.run(owner, async () => {
      for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
        const seen = await this.slots.read(owner);
        const book = seen === undefined ? undefined : (JSON.parse(seen) as PushBook);
        const changed = change(book);
        const next = changed === undefined ? undefined : JSON.stringify(changed);
        if (next === seen) return;
        const written = await this.slots.write(owner, seen, next, PUSH_BOOKS_MAX);
        if (written === "written") return;
        if (written === "full") {
          throw new PushBooksFullError(`${this.name} keeps push subscriptions of ${PUSH_BOOKS_MAX} people already; try again later`);
        }
        await sleep(Math.random() * Math.min(MAX_PAUSE_MS, 2 ** attempt));
      }
      throw new Error(`${this.name}: the push subscriptions of one person kept changing; gave up after ${ATTEMPTS} tries`);
    });
  }
}

/** What a one-process store does with a change before it counts (the change itself; `after()`: the whole table after it). */
export type PersistBook = (owner: string, next: string | undefined, after: () => ReadonlyMap<string, string>) => Promise<void>;

/**
 * The books in this process's memory (memory, file and keyv stores: one process owns the data), as
 * BookSlots: a write is checked, handed to `persist` (the file's rewrite, the keyv key), and only
 * then seen by reads; writes go one at a time, so a persisted table is never older than the last.
 */
export class BookTable {
  private readonly texts = new Map<string, string>();
  private writing: Promise<unknown> = Promise.resolve();

  constructor(initial: Iterable<PushBook> = []) {
    for (const book of initial) this.load(book);
  }

  /** A book read from the store's data at open. */
  load(book: PushBook): void {
    this.texts.set(book.owner, JSON.stringify(book));
  }

  slots(persist: PersistBook = async () => undefined): BookSlots {
    return {
      read: async (owner) => this.texts.get(owner),
      all: async () => [...this.texts.values()],
      write: (owner, seen, next, max) => {
        const done = this.writing.then(async (): Promise<SlotWrite> => {
          if (this.texts.get(owner) !== seen) return "changed";
          if (seen === undefined && next !== undefined && this.texts.size >= max) return "full";
          const after = () => {
            const table = new Map(this.texts);
            if (next === undefined) table.delete(owner);
            else table.set(owner, next);
            return table;
          };
          await persist(owner, next, after);
          if (next === undefined) this.texts.delete(owner);
          else this.texts.set(owner, next);
          return "written";
        });
        this.writing = done.catch(() => undefined);
        return done;
      },
    };
  }
}
