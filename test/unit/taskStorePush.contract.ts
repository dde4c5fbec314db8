// The push subscription part of the shared TaskStore contract (TaskStore.push, src/tasks/pushBook.ts),
// registered by taskStoreContract inside its describe, so each case gets the fresh store of that suite.
// `shared`: another store opened on the same data is another instance of one cluster (redis,
// postgres), so their changes must not lose each other's.

import assert from "node:assert/strict";
import { it } from "node:test";
import type { Identity } from "../../src/auth/identity.js";
import type { PushSubscription } from "../../src/tasks/pushBook.js";
import type { TaskStore } from "../../src/tasks/taskStore.js";

const ALICE = "a".repeat(64);
const BOB = "b".repeat(64);
const alice: Identity = { subject: "alice", scopes: ["tasks"], claims: { groups: ["release-managers"] } };

const subscription = (device: string): PushSubscription => ({
  endpoint: `https://push.example.com/send/${device}`,
  keys: { p256dh: `p256dh-${device}`, auth: `auth-${device}` },
});
const endpoints = (book: { subscriptions: PushSubscription[] } | undefined) => (book?.subscriptions ?? []).map((s) => s.endpoint);

export function pushCases(
  store: () => TaskStore,
  reopen: () => Promise<TaskStore>,
  traits: { persistent: boolean; shared?: boolean | undefined },
): void {
  const persistenceCase = traits.persistent ? it : () => undefined;
  const sharedCase = traits.shared === true ? it : () => undefined;

  it("push: an added subscription is in its owner's book with the identity, and in all()", async () => {
    await store().push.add(ALICE, alice, subscription("laptop"), 10);
    const book = await store().push.of(ALICE);
    assert.deepEqual(book, { owner: ALICE, identity: alice, subscriptions: [subscription("laptop")] });
    assert.deepEqual(await store().push.all(), [book]);
    assert.equal(await store().push.of(BOB), undefined);
  });

  it("push: the same endpoint again replaces it (and the identity is the latest), not a second entry", async () => {
    await store().push.add(ALICE, alice, subscription("laptop"), 10);
    await store().push.add(ALICE, alice, subscription("phone"), 10);
    const renewed = { ...subscription("laptop"), keys: { p256dh: "new-p256dh", auth: "new-auth" } };
    const later: Identity = { subject: "alice", scopes: [] };
    await store().push.add(ALICE, later, renewed, 10);
    const book = await store().push.of(ALICE);
    assert.deepEqual(book?.subscriptions, [subscription("phone"), renewed], "oldest first; the renewed one is the newest");
    assert.deepEqual(book?.identity, later);
  });

  it("push: at most perOwner subscriptions per owner, the oldest dropped; other owners untouched", async () => {
    await store().push.add(BOB, { subject: "bob" }, subscription("bob-laptop"), 3);
    for (const device of ["one", "two", "three", "four"]) await store().push.add(ALICE, alice, subscription(device), 3);
    assert.deepEqual(
      endpoints(await store().push.of(ALICE)),
      ["two", "three", "four"].map((d) => subscription(d).endpoint),
    );
    assert.deepEqual(endpoints(await store().push.of(BOB)), [subscription("bob-laptop").endpoint]);
    await assert.rejects(store().push.add(ALICE, alice, subscription("five"), 0), RangeError);
  });

  it("push: remove says whether it was there; the last one removed removes the book from all()", async () => {
    await store().push.add(ALICE, alice, subscription("laptop"), 10);
    await store().push.add(ALICE, alice, subscription("phone"), 10);
    await store().push.add(BOB, { subject: "bob" }, subscription("bob-laptop"), 10);
    assert.equal(await store().push.remove(ALICE, subscription("laptop").endpoint), true);
    assert.equal(await store().push.remove(ALICE, subscription("laptop").endpoint), false);
    assert.equal(await store().push.remove(BOB, subscription("phone").endpoint), false, "not bob's");
    assert.deepEqual(endpoints(await store().push.of(ALICE)), [subscription("phone").endpoint]);
    assert.equal(await store().push.remove(ALICE, subscription("phone").endpoint), true);
    assert.equal(await store().push.of(ALICE), undefined);
    assert.deepEqual(
      (await store().push.all()).map((book) => book.owner),
      [BOB],
    );
  });

  it("push: 20 concurrent adds of one owner lose none", async () => {
    const devices = Array.from({ length: 20 }, (_, i) => `device-${i}`);
    await Promise.all(devices.map((device) => store().push.add(ALICE, alice, subscription(device), 50)));
    assert.deepEqual(endpoints(await store().push.of(ALICE)).sort(), devices.map((d) => subscription(d).endpoint).sort());
  });

  sharedCase("push: two instances adding to one owner's book at once lose neither's", async () => {
    const other = await reopen();
    const devices = Array.from({ length: 20 }, (_, i) => `device-${i}`);
    await Promise.all(devices.map((device, i) => (i % 2 === 0 ? store() : other).push.add(ALICE, alice, subscription(device), 50)));
    assert.deepEqual(endpoints(await other.push.of(ALICE)).sort(), devices.map((d) => subscription(d).endpoint).sort());
    assert.equal(await other.push.remove(ALICE, subscription("device-0").endpoint), true);
    assert.equal((await store().push.of(ALICE))?.subscriptions.length, 19, "a removal on one instance is seen by the other");
  });

  persistenceCase("push: subscriptions survive a reopen (as if killed), removals too", async () => {
    await store().push.add(ALICE, alice, subscription("laptop"), 10);
    await store().push.add(ALICE, alice, subscription("phone"), 10);
    await store().push.add(BOB, { subject: "bob" }, subscription("bob-laptop"), 10);
    await store().push.remove(BOB, subscription("bob-laptop").endpoint);
    const again = await reopen(); // the first store is not closed
    assert.deepEqual(await again.push.of(ALICE), {
      owner: ALICE,
      identity: alice,
      subscriptions: [subscription("laptop"), subscription("phone")],
    });
    assert.deepEqual(
      (await again.push.all()).map((book) => book.owner),
      [ALICE],
    );
  });

  it("push: operations after close reject, naming the store", async () => {
    await store().close();
    await assert.rejects(store().push.of(ALICE), /task store .*closed/);
    await assert.rejects(store().push.add(ALICE, alice, subscription("laptop"), 10), /closed/);
  });
}
