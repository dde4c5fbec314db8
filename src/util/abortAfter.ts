// abortAfter: a signal that aborts once `ms` have passed (with reason()), or as soon as `also` does.
// Not AbortSignal.any([AbortSignal.timeout(ms), also]): Node holds a timeout signal only weakly and
// any() does not hold its sources, so a garbage collection before the timer fires leaves the combined
// signal never aborting (nodejs/node#57736), a wait without an end. Here the timer holds the controller.

export interface Deadline {
  readonly signal: AbortSignal;
  /** Ends the timer (the wait is over); the signal stays as it is. */
  clear(): void;
}

export function abortAfter(ms: number, reason: () => Error, also?: AbortSignal): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(reason()), ms);
  return {
    signal: also ? AbortSignal.any([controller.signal, also]) : controller.signal,
    clear: () => clearTimeout(timer),
  };
}
