// LiveInlineCalls: the inline calls answering a client right now, so shutdown can drain them: it
// waits up to a grace period for them to end on their own, then ends each one with a JSON-RPC
// error (shutting_down) and cancels its upstream call.

export interface Drainable {
  /** Ends the call now with a shutting-down error; resolves once that error was handed on. */
  shutDown(): Promise<void>;
}

export class LiveInlineCalls {
  private readonly live = new Set<Drainable>();
  private idle?: () => void;

  add(call: Drainable): void {
    this.live.add(call);
  }

  delete(call: Drainable): void {
    this.live.delete(call);
    if (this.live.size === 0) this.idle?.();
  }

  count(): number {
    return this.live.size;
  }

  /** Waits up to `graceMs` for the live calls to end, then shuts the rest down. */
  async drain(graceMs: number): Promise<void> {
    if (this.live.size > 0 && graceMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => (this.idle = resolve)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs))),
      ]);
      clearTimeout(timer);
    }
    await Promise.all([...this.live].map((call) => call.shutDown()));
  }
}
