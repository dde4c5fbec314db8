// requestStateCodec: AES-256-GCM sealed requestState — round trip, every single-character change
// refused, a state from another key (another process / another mrtr.secret) told apart from an
// altered one, expiry, malformed input, and nothing of the claims readable in the token.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { argumentsDigest, REQUEST_STATE_REASONS, type RequestStateClaims, RequestStateCodec } from "../../src/calls/requestStateCodec.js";

const SECRET = "0123456789abcdef0123456789abcdef-shared";
const NOW = 1_800_000_000_000;
const claims: RequestStateClaims = {
  held: "held-7f3a9c",
  round: "round-51d2",
  owner: "b5bb9d8014a0f9b1d61e21e796d78dccdf1352f23cd32812f4850b878ae4944c",
  method: "tools/call",
  name: "build_quarterly_report",
  args: argumentsDigest({ quarter: "Q3", region: "emea" }),
  exp: NOW + 60_000,
};

const failure = (codec: RequestStateCodec, token: unknown, now = NOW) => {
  const opened = codec.open(token, now);
  assert.equal(opened.ok, false, `expected a refusal for ${String(token).slice(0, 40)}`);
  return opened.ok ? "" : opened.reason;
};

describe("RequestStateCodec", () => {
  it("round trip, with mrtr.secret and with a random per-process key", () => {
    for (const codec of [new RequestStateCodec(SECRET), new RequestStateCodec()]) {
      assert.deepEqual(codec.open(codec.seal(claims), NOW), { ok: true, claims });
    }
  });

  it("instances with the same mrtr.secret open each other's states (and survive a restart)", () => {
    const token = new RequestStateCodec(SECRET).seal(claims);
    assert.deepEqual(new RequestStateCodec(SECRET).open(token, NOW), { ok: true, claims });
  });

  it("the instance holding the call travels sealed; a state sealed before it was carried still opens", () => {
    const codec = new RequestStateCodec(SECRET);
    const held = { ...claims, holder: "instance-4c1e" };
    assert.deepEqual(codec.open(codec.seal(held), NOW), { ok: true, claims: held });
    assert.deepEqual(codec.open(codec.seal(claims), NOW), { ok: true, claims });
    assert.equal(failure(codec, codec.seal({ ...claims, holder: 7 } as unknown as RequestStateClaims)), REQUEST_STATE_REASONS.altered);
  });

  it("nothing of the claims is readable in the token, and sealing twice gives different tokens", () => {
    const token = new RequestStateCodec(SECRET).seal(claims);
    const decoded = token
      .split(".")
      .map((part) => Buffer.from(part, "base64url").toString("latin1"))
      .join("\n");
    for (const value of [
      claims.owner,
      claims.name,
      claims.held,
      claims.round,
      claims.method,
      claims.args,
      "tools/",
      "build_",
      String(claims.exp),
    ]) {
      assert.ok(!token.includes(value), `token shows ${value}`);
      assert.ok(!decoded.includes(value), `decoded token shows ${value}`);
    }
    for (const key of ['"owner":', '"held":', '"name":']) assert.ok(!decoded.includes(key), `no JSON in clear (${key})`);
    assert.notEqual(new RequestStateCodec(SECRET).seal(claims), token, "a fresh IV per seal");
  });

  it("a state sealed under another key says so, distinct from 'altered'", () => {
    const expected = REQUEST_STATE_REASONS.otherKey;
    assert.match(
      expected,
      /sealed by another taskgate process \(restarted without mrtr\.secret, or instances with different mrtr\.secret\)/,
    );
    assert.match(expected, /set the same mrtr\.secret on every instance/);
    // A restart without mrtr.secret: a new random key.
    assert.equal(failure(new RequestStateCodec(), new RequestStateCodec().seal(claims)), expected);
    // Instances with different secrets.
    assert.equal(failure(new RequestStateCodec(`${SECRET}-other`), new RequestStateCodec(SECRET).seal(claims)), expected);
    // With and without a secret.
    assert.equal(failure(new RequestStateCodec(SECRET), new RequestStateCodec().seal(claims)), expected);
  });

  it("any single-character change is refused: altered (box or tag), another key (key id), or malformed (version)", () => {
    const codec = new RequestStateCodec(SECRET);
    const token = codec.seal(claims);
    const reasons = new Set<string>();
    for (let i = 0; i < token.length; i++) {
      if (token[i] === ".") continue;
      const changed = token.slice(0, i) + (token[i] === "A" ? "B" : "A") + token.slice(i + 1);
      const opened = codec.open(changed, NOW);
      // The last character of a part may carry only padding bits: then the bytes, and the state, are unchanged.
      if (opened.ok) {
        const bytes = (t: string) =>
          t
            .split(".")
            .map((part) => Buffer.from(part, "base64url").toString("hex"))
            .join(".");
        assert.equal(bytes(changed), bytes(token), `a change at ${i} was accepted`);
        continue;
      }
      reasons.add(opened.reason);
    }
    assert.deepEqual(
      [...reasons].sort(),
      [REQUEST_STATE_REASONS.altered, REQUEST_STATE_REASONS.malformed, REQUEST_STATE_REASONS.otherKey].sort(),
    );
    // Swapping in another state's box under this seal is altered too.
    const [otherBox] = codec.seal({ ...claims, owner: "someone-else" }).split(".");
    assert.equal(failure(codec, `${otherBox}.${token.split(".")[1]}`), REQUEST_STATE_REASONS.altered);
  });

  it("expiry: valid until exp, refused from exp on", () => {
    const codec = new RequestStateCodec(SECRET);
    const token = codec.seal(claims);
    assert.equal(codec.open(token, claims.exp - 1).ok, true);
    assert.equal(failure(codec, token, claims.exp), REQUEST_STATE_REASONS.expired);
    assert.match(REQUEST_STATE_REASONS.expired, /has expired: .*call the tool again/);
  });

  it("malformed input", () => {
    const codec = new RequestStateCodec(SECRET);
    const token = codec.seal(claims);
    const [box, seal] = token.split(".") as [string, string];
    const shortSeal = Buffer.from(seal, "base64url").subarray(0, 10).toString("base64url");
    const otherVersion = Buffer.from(seal, "base64url");
    otherVersion[0] = 2;
    for (const bad of [
      undefined,
      42,
      {},
      "",
      "abc",
      `${token}.extra`,
      "a b.c",
      "!!.!!",
      `${box}.${shortSeal}`,
      `AAAA.${seal}`,
      `${box}.${otherVersion.toString("base64url")}`,
    ]) {
      assert.equal(failure(codec, bad), REQUEST_STATE_REASONS.malformed, String(bad));
    }
  });
});

describe("argumentsDigest", () => {
  it("is the same for equal arguments in any key order, different otherwise", () => {
    assert.equal(argumentsDigest({ a: 1, b: { c: [1, { d: 2, e: 3 }] } }), argumentsDigest({ b: { c: [1, { e: 3, d: 2 }] }, a: 1 }));
    assert.notEqual(argumentsDigest({ a: 1 }), argumentsDigest({ a: 2 }));
    assert.equal(argumentsDigest(undefined), argumentsDigest({}));
  });
});
