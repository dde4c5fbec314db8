// ListingIndex: the listing order of the records a process holds in memory (the memory, file and
// keyv stores): B+ trees (sorted-btree) keyed by taskListing's listKey, one per owner and one for
// all, so a page walks only its own entries and add/remove are O(log n).

import BTreeModule from "sorted-btree";
import { type ListPosition, listKey, positionOfKey } from "./taskListing.js";

const BTree = BTreeModule.default;
/** listKey → taskId, ascending; listings walk it backwards. */
type Tree = InstanceType<typeof BTree<string, string>>;

export class ListingIndex {
  private readonly everyone: Tree = new BTree<string, string>();
  private readonly byOwner = new Map<string, Tree>();

  add(ownerHash: string, key: string, taskId: string): void {
    this.everyone.set(key, taskId);
    let owned = this.byOwner.get(ownerHash);
    if (owned === undefined) this.byOwner.set(ownerHash, (owned = new BTree<string, string>()));
    owned.set(key, taskId);
  }

  remove(ownerHash: string, key: string): void {
    this.everyone.delete(key);
    const owned = this.byOwner.get(ownerHash);
    if (owned === undefined) return;
    owned.delete(key);
    if (owned.size === 0) this.byOwner.delete(ownerHash);
  }

  /** Up to `count` (position, taskId) strictly below `below` (undefined = from the newest), newest first. */
  below(ownerHash: string | undefined, below: ListPosition | undefined, count: number): Array<{ at: ListPosition; taskId: string }> {
    const tree = ownerHash === undefined ? this.everyone : this.byOwner.get(ownerHash);
    const out: Array<{ at: ListPosition; taskId: string }> = [];
    if (tree === undefined) return out;
    for (const [key, taskId] of tree.entriesReversed(below === undefined ? undefined : listKey(below), undefined, true)) {
      if (out.length === count) break;
      out.push({ at: positionOfKey(key), taskId });
    }
    return out;
  }
}
