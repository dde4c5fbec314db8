// Bounded waiting for every test: every wait ends, and a wait that ends by its limit says what
// was not answered, so a hang shows up as a failed assertion naming it, not as a stuck run. Tests
// wait on the event itself (nextEvent, a frame, a log line) or poll the state it changes
// (eventually, until); they never sleep a fixed time in place of an event.

import type { EventEmitter } from "node:events";

/** `promise`, or a rejection "<what>: no answer within <ms> ms" once `ms` have passed. */
export function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** Polls `check` every `everyMs` until it returns a value other than undefined; rejects after `ms`. */
export async function until<T>(ms: number, what: string, check: () => Promise<T | undefined> | T | undefined, everyMs = 100): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const why = last instanceof Error ? ` (last error: ${last.message})` : "";
      throw new Error(`${what}: not within ${ms} ms${why}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Elapsed milliseconds of `work`, with its result. */
export async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: Math.round(performance.now() - started) };
}

/** Resolves once `check` holds (polled every 10 ms), or fails naming `what` after `timeoutMs`. */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Resolves with the next `name` event of `events` (e.g. the legacy server's) that `match`es; rejects after `ms`. */
export function nextEvent<T>(events: EventEmitter, name: string, match: (payload: T) => boolean = () => true, ms = 5000): Promise<T> {
  return new Promise((resolve, reject) => {
    const listener = (payload: T) => {
      if (!match(payload)) return;
      clearTimeout(timer);
      events.off(name, listener);
      resolve(payload);
    };
    const timer = setTimeout(() => {
      events.off(name, listener);
      reject(new Error(`timed out after ${ms} ms waiting for event '${name}'`));
    }, ms);
    events.on(name, listener);
  });
}
