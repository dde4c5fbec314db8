// Drives load from the bench's own process: a block of calls run one after another or with a
// fixed number in flight, each call timed. Blocks of different cases are interleaved by the
// scenarios (rotate()), so drift on a noisy machine hits every case alike.

export interface Block {
  /** Per-call latency, ms. */
  latencies: number[];
  /** Wall time of the whole block, ms. */
  elapsedMs: number;
}

/** `count` calls of fn(i), `concurrency` in flight at a time (1 = sequential). */
export async function runBlock(count: number, concurrency: number, fn: (i: number) => Promise<unknown>): Promise<Block> {
  const latencies = new Array<number>(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const start = performance.now();
      await fn(i);
      latencies[i] = performance.now() - start;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return { latencies, elapsedMs: performance.now() - started };
}

/** The cases in round `round`'s order: each round starts one case later than the previous one. */
export function rotate<T>(cases: readonly T[], round: number): T[] {
  const shift = round % cases.length;
  return [...cases.slice(shift), ...cases.slice(0, shift)];
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
