// AsyncQueue: a one-consumer queue of values that a producer pushes over time and a consumer reads
// with for-await. push() never blocks (the consumer of an HTTP stream has its own back-pressure
// cut-off); end() finishes the sequence after everything already pushed; values pushed after end()
// are dropped. `ended` says whether end() was called; `drained` resolves once the consumer has
// read past the end (everything it was given is in its hands).

export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiting?: ((result: IteratorResult<T>) => void) | undefined;
  private done = false;
  private markDrained: () => void = () => undefined;
  readonly drained = new Promise<void>((resolve) => (this.markDrained = resolve));

  get ended(): boolean {
    return this.done;
  }

  push(item: T): void {
    if (this.done) return;
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) {
      this.markDrained();
      waiting({ value: undefined, done: true });
    }
  }

  /** Resolves with the next value, or done once the queue ended and is empty. */
  next(): Promise<IteratorResult<T>> {
    if (this.items.length > 0) return Promise.resolve({ value: this.items.shift() as T, done: false });
    if (this.done) {
      this.markDrained();
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve) => (this.waiting = resolve));
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return { next: () => this.next() };
  }
}
