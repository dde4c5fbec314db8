// ExpiryQueue: task ids ordered by the epoch ms at which they expire (a binary min-heap), so a sweep
// finds the expired ones without looking at the rest. push is O(log n); popDue pops only entries
// already due, O(log n) each. Entries are not removed when a record changes: the owner checks each
// popped (id, at) against the record's current deadline and ignores stale ones.

export interface Due {
  id: string;
  at: number;
}

export class ExpiryQueue {
  private readonly heap: Due[] = [];

  get size(): number {
    return this.heap.length;
  }

  push(id: string, at: number): void {
    const heap = this.heap;
    const entry = { id, at };
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.at <= at) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
  }

  /** Removes and returns the earliest entry if it is due by `now`; else undefined. */
  popDue(now: number): Due | undefined {
    const heap = this.heap;
    const top = heap[0];
    if (top === undefined || top.at > now) return undefined;
    const last = heap.pop()!;
    if (heap.length > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= heap.length) break;
        const right = left + 1;
        const child = right < heap.length && heap[right]!.at < heap[left]!.at ? right : left;
        if (heap[child]!.at >= last.at) break;
        heap[i] = heap[child]!;
        i = child;
      }
      heap[i] = last;
    }
    return top;
  }
}
