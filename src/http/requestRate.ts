// RequestRate: quotas.requestsPerMinute, a token bucket per identity (owner hash). Each bucket holds
// up to `perMinute` requests and refills at perMinute/60 per second, so a caller may burst up to the
// limit and then goes on at the limit's pace. take() says whether a request may go now, or after
// how many seconds one would (for Retry-After). One RequestRate per instance serves both MCP doors,
// the task inventory and /approvals. Buckets live in this process only: with several
// instances behind a balancer each counts its own share (see the README's Security section).

/** Buckets kept at most; past this, full ones (idle callers) are dropped first. */
const BUCKET_LIMIT = 10_000;

interface Bucket {
  tokens: number;
  /** performance.now() of the last refill. */
  at: number;
}

export type RateDecision = { ok: true } | { ok: false; retryAfterSeconds: number };

export class RequestRate {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.perMs = perMinute / 60_000;
  }

  take(owner: string): RateDecision {
    const now = this.now();
    let bucket = this.buckets.get(owner);
    if (bucket === undefined) {
      if (this.buckets.size >= BUCKET_LIMIT) this.dropFull(now);
      bucket = { tokens: this.perMinute, at: now };
      this.buckets.set(owner, bucket);
    } else {
      bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * this.perMs);
      bucket.at = now;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.perMs / 1000)) };
  }

  /** Buckets held now (for tests and metrics). */
  size(): number {
    return this.buckets.size;
  }

  /** Forgets callers whose bucket has refilled (they would start full anyway); the oldest half if none has. */
  private dropFull(now: number): void {
    for (const [owner, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.at) * this.perMs >= this.perMinute) this.buckets.delete(owner);
    }
    if (this.buckets.size < BUCKET_LIMIT) return;
    let drop = Math.floor(this.buckets.size / 2);
    for (const owner of this.buckets.keys()) {
      if (drop-- <= 0) break;
      this.buckets.delete(owner);
    }
  }
}
