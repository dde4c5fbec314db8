// Drives load from the bench's own process: a block of calls run one after another or with a
// fixed number in flight, each call timed. Blocks of different cases are interleaved by the
// scenarios (shuffle()), so drift on a noisy machine hits every case alike.

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

/** The cases in round `round`'s own order, shuffled with the round as seed (the same order every run): no case always
 *  follows the same one, so what a case leaves behind (a busy core, a warm cache, a socket still closing) does not
 *  always fall on the same neighbour (rotating the order, as the bench once did, made the case after the proxy floor
 *  read ~6 % slower and ~20 % more CPU than the floor in a run where both were the same proxy). */
export function shuffle<T>(cases: readonly T[], round: number): T[] {
  const order = [...cases];
  let seed = (round + 1) * 0x9e3779b9;
  const next = () => {
    // mulberry32: a small, well-spread generator; reproducibility, not secrecy, is what is needed.
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = order.length - 1; i > 0; i -= 1) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
