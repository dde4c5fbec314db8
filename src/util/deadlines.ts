// Many deadlines of one fixed length on one Node timer. Every inline call waits at most a JSON
// window for its first message, and every answered upstream stream gets a moment to end; both are
// almost always met, so a Node timer per call is made and cleared at once — and a duration whose
// timer list empties is torn down and built again per call (a list, a priority-queue entry, a clock
// read). Deadlines of equal length end in the order they were set, so they wait in a FIFO: one timer
// runs for the oldest pending one, and a deadline met in time is only marked — and dropped as soon as
// nothing older is pending, so the queue holds only the deadlines from the oldest pending one on (a
// 30 s limit met thousands of times a second must not keep each met one for 30 s).
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
    this.owner.cancelled();
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

  /** From `head` on: the deadlines set, oldest first (the slots before it emptied, so they hold nothing). */
  private queue: (Entry | undefined)[] = [];
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

  /** Deadlines held: the pending ones and those set after the oldest pending one. */
  get held(): number {
    return this.queue.length - this.head;
  }

  /** A deadline was met in time: settled, and the met ones at the head dropped (run() drops them itself while it runs). */
  cancelled(): void {
    this.settled();
    if (!this.running) this.dropMet();
  }

  private settled(): void {
    if (--this.pending === 0) this.timer?.unref();
  }

  private dropMet(): void {
    const { queue } = this;
    while (this.head < queue.length && !queue[this.head]!.fire) queue[this.head++] = undefined;
    this.compact();
  }

  /** Empties the queue once all of it was passed, or moves the rest to a new one once most of it was. */
  private compact(): void {
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
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
        queue[this.head++] = undefined;
        const fire = entry.fire;
        if (!fire) continue;
        entry.fire = undefined;
        this.settled();
        fire();
      }
    } finally {
      // Also when a callback threw (its error goes on to the process, as a plain timer's would): the rest still wait
      // on a timer, the ones already due fire on the next turn.
      this.running = false;
      this.compact();
      if (this.head < this.queue.length) this.arm(this.queue[this.head]!.at - now);
    }
  }
}
