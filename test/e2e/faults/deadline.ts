// Bounded waiting for the fault tests: every wait ends, and a wait that ends by its limit says
// what was not answered, so a hang shows up as a failed assertion naming it, not as a stuck run.

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
