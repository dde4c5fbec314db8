// A seeded pseudo-random source for the chaos run (pure-rand's xoroshiro128+): the same seed gives
// the same fault schedule and the same per-user choices, so a failing run can be repeated. Each
// user and the fault schedule fork their own stream, so one user's choices do not shift another's.

import { uniformInt } from "pure-rand/distribution/uniformInt";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";

export class Rng {
  private readonly generator;

  constructor(readonly seed: number) {
    this.generator = xoroshiro128plus(seed);
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return uniformInt(this.generator, min, max);
  }

  /** true with probability p. */
  chance(p: number): boolean {
    return this.int(0, 9_999) < p * 10_000;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("Rng.pick: nothing to pick from");
    return items[this.int(0, items.length - 1)] as T;
  }

  /** A choice among weighted options. */
  weighted<T extends string>(weights: Record<T, number>): T {
    const entries = Object.entries(weights) as [T, number][];
    const total = entries.reduce((sum, [, w]) => sum + w, 0);
    let roll = this.int(0, total - 1);
    for (const [name, weight] of entries) {
      if (roll < weight) return name;
      roll -= weight;
    }
    return entries[entries.length - 1]![0];
  }

  /** An independent stream for `label` (a user, the fault schedule), derived from this seed. */
  fork(label: string): Rng {
    let hash = this.seed >>> 0;
    for (const char of label) hash = (Math.imul(hash ^ char.charCodeAt(0), 0x01000193) + 0x9e3779b9) >>> 0;
    return new Rng(hash);
  }
}
