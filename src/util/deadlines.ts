// Many deadlines of one fixed length on one Node timer. Every inline call waits at most a JSON
// window for its first message, and every answered upstream stream gets a moment to end; both are
// almost always met, so a Node timer per call is made and cleared at once — and a duration whose
// timer list empties is torn down and built again per call (a list, a priority-queue entry, a clock
// read). Deadlines of equal length end in the order they were set, so they wait in a FIFO: one timer
// runs for the oldest pending one, and a deadline met in time is only marked.
// Like a plain timer, the one timer keeps the process alive while a deadline is pending, and only
// then (ref/unref are flag flips, not timer work).

/** One deadline: cancel() once what it guards happened in time. */
export interface Deadline {
  cancel(): void;
}

class Entry implements Deadline {
  constructor(
    private readonly owner: Deadlines,
    readonly at: number,
    public fire: (() => void) | undefined,
  ) {}

  cancel(): void {
    if (!this.fire) return;
    this.fire = undefined;
    this.owner.settled();
  }
}

export class Deadlines {
  private static readonly shared = new Map<number, Deadlines>();

  /** The process's deadlines of length `ms` (one timer for all of them). */
  static of(ms: number): Deadlines {
    let deadlines = Deadlines.shared.get(ms);
    if (!deadlines) Deadlines.shared.set(ms, (deadlines = new Deadlines(ms)));
    return deadlines;
  }

  private queue: Entry[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Deadlines neither fired nor cancelled: the timer is ref'd while there are any. */
  private pending = 0;
  /** While run() fires deadlines: one set meanwhile is armed by run() itself, for the oldest. */
  private running = false;

  constructor(readonly ms: number) {}

  /** Runs `fire` once `ms` have passed, unless the deadline is cancelled first. */
  start(fire: () => void): Deadline {
    const entry = new Entry(this, performance.now() + this.ms, fire);
    this.queue.push(entry);
    if (this.pending++ === 0) this.timer?.ref();
    if (!this.timer && !this.running) this.arm(this.ms);
    return entry;
  }

  /** A deadline was cancelled or fired. */
  settled(): void {
    if (--this.pending === 0) this.timer?.unref();
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.run(), Math.max(1, Math.ceil(ms)));
    if (this.pending === 0) this.timer.unref();
  }

  private run(): void {
    this.timer = undefined;
    const now = performance.now();
    const { queue } = this;
    this.running = true;
    try {
      while (this.head < queue.length) {
        const entry = queue[this.head]!;
        if (entry.fire && entry.at > now) break;
        this.head++;
        const fire = entry.fire;
        if (!fire) continue;
        entry.fire = undefined;
        this.settled();
        fire();
      }
    } finally {
      this.running = false;
    }
    if (this.head === queue.length) {
      this.queue = [];
      this.head = 0;
      return;
    }
    // Keep the array from growing while the head moves on.
    if (this.head > 1024 && this.head * 2 > queue.length) {
      this.queue = queue.slice(this.head);
      this.head = 0;
    }
    this.arm(this.queue[this.head]!.at - now);
  }
}
