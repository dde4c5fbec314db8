// OperationGate: lets a store's close() wait for the operations already started and refuse new
// ones. run(op) starts `op` unless the gate is closing (then it rejects with "<label> is closed");
// close(finish) waits until no operation runs, then runs `finish` once; later close() calls return
// the same promise.

export class OperationGate {
  private readonly running = new Set<Promise<unknown>>();
  private closing: Promise<void> | undefined;

  constructor(private readonly label: string) {}

  run<T>(operation: () => Promise<T>): Promise<T> {
    if (this.closing !== undefined) return Promise.reject(new Error(`${this.label} is closed`));
    let promise: Promise<T>;
    try {
      promise = operation();
    } catch (error) {
      return Promise.reject(error);
    }
    this.running.add(promise);
    const forget = () => {
      this.running.delete(promise);
    };
    promise.then(forget, forget);
    return promise;
  }

  close(finish: () => Promise<void>): Promise<void> {
    this.closing ??= (async () => {
      while (this.running.size > 0) await Promise.allSettled([...this.running]);
      await finish();
    })();
    return this.closing;
  }
}
