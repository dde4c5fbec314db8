// Whether the client of a request went away before its reply was written. Handlers may read it as
// an AbortSignal, made only when one asks for it; an inline call, the common case, only registers a
// listener (a signal is an EventTarget: making one and listening on it is a real share of a quick
// call's cost). A class, handed on as it is: its `signal` is a getter of the prototype. A getter in
// an object literal gets an accessor pair per object, which V8 allocates in old space, so every
// request whose object had one stayed alive through young-generation collections (docs/benchmarks.md).

export class ClientGone {
  private controller?: AbortController;
  private listeners?: Array<() => void>;
  private gone = false;

  /** Aborts when the client goes away (made on first use). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.gone) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** Runs `listener` once the client is gone (in a microtask when it is already). */
  onGone(listener: () => void): void {
    if (this.gone) queueMicrotask(listener);
    else (this.listeners ??= []).push(listener);
  }

  /** The client went away: listeners run, then the signal (if made) aborts. */
  leave(): void {
    if (this.gone) return;
    this.gone = true;
    for (const listener of this.listeners?.splice(0) ?? []) listener();
    this.controller?.abort();
  }
}
