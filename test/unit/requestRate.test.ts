// RequestRate (quotas.requestsPerMinute): a token bucket per identity, on a clock the test moves.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RequestRate } from "../../src/http/requestRate.js";

function clocked(perMinute: number) {
  let now = 0;
  const rate = new RequestRate(perMinute, () => now);
  return { rate, advance: (ms: number) => (now += ms) };
}

describe("RequestRate", () => {
  it("a burst up to the limit, then refusals with the seconds until the next request may go", () => {
    const { rate, advance } = clocked(6); // one every 10 s
    for (let i = 0; i < 6; i++) assert.deepEqual(rate.take("alice"), { ok: true }, `request ${i + 1}`);
    assert.deepEqual(rate.take("alice"), { ok: false, retryAfterSeconds: 10 });
    advance(4_000);
    assert.deepEqual(rate.take("alice"), { ok: false, retryAfterSeconds: 6 });
    advance(6_000);
    assert.deepEqual(rate.take("alice"), { ok: true });
    assert.equal(rate.take("alice").ok, false);
  });

  it("identities have their own buckets; a bucket never holds more than the limit", () => {
    const { rate, advance } = clocked(2);
    assert.ok(rate.take("alice").ok && rate.take("alice").ok);
    assert.equal(rate.take("alice").ok, false);
    assert.ok(rate.take("bob").ok, "bob is not affected");
    advance(60 * 60_000);
    assert.ok(rate.take("alice").ok && rate.take("alice").ok);
    assert.equal(rate.take("alice").ok, false, "an hour idle refills to the limit, not beyond");
  });

  it("Retry-After is at least one second", () => {
    const { rate, advance } = clocked(600); // one every 100 ms
    for (let i = 0; i < 600; i++) rate.take("alice");
    advance(99);
    assert.deepEqual(rate.take("alice"), { ok: false, retryAfterSeconds: 1 });
  });

  it("many identities: buckets of idle callers are dropped, so memory stays bounded", () => {
    const { rate, advance } = clocked(60);
    for (let i = 0; i < 10_000; i++) rate.take(`caller-${i}`);
    advance(60_000); // all refilled
    rate.take("one-more");
    assert.ok(rate.size() < 100, `kept ${rate.size()} buckets`);
  });
});
