// The bound on people with push subscriptions (PUSH_BOOKS_MAX), on the memory store (the shared
// contract, taskStorePush.contract.ts, covers the rest on every backend): a new person past it is
// refused, one already kept may still add, and the notifier answers the refusal as a 503.
// Run: node --import tsx --test test/unit/pushBooks.test.ts

import assert from "node:assert/strict";
import { test } from "node:test";
import { NotifySchema } from "../../src/config/inventoryOptions.js";
import { Notifier } from "../../src/notify/notifier.js";
import { createLogger } from "../../src/observability/logger.js";
import { InventoryError } from "../../src/protocol/errors.js";
import { PUSH_BOOKS_MAX, PushBooksFullError } from "../../src/tasks/pushBook.js";
import { createTaskStore } from "../../src/tasks/stores/createTaskStore.js";

const device = (n: number) => ({ endpoint: `https://push.example.com/send/${n}`, keys: { p256dh: "p", auth: "a" } });

test("a store keeps push subscriptions of PUSH_BOOKS_MAX people; a new one past that is refused (a 503 from the notifier)", async () => {
  const store = await createTaskStore({ kind: "memory" });
  try {
    for (let n = 0; n < PUSH_BOOKS_MAX; n++) await store.push.add(`owner-${n}`, { subject: `s${n}` }, device(n), 10);
    await assert.rejects(store.push.add("one-more", { subject: "late" }, device(0), 10), PushBooksFullError);
    await store.push.add("owner-0", { subject: "s0" }, device(1), 10); // someone kept already may add a browser
    assert.equal((await store.push.of("owner-0"))?.subscriptions.length, 2);
    const notify = NotifySchema.parse({});
    const notifier = new Notifier(notify, store.push, () => "https://gw.example.com", createLogger("silent"));
    await assert.rejects(notifier.subscribe("one-more", { subject: "late" }, device(0)), (error: unknown) => {
      assert.ok(error instanceof InventoryError);
      assert.equal(error.status, 503);
      assert.match(error.message, /task store \(memory\) keeps push subscriptions of 10000 people already; try again later/);
      return true;
    });
    await store.push.remove("owner-1", device(1).endpoint);
    await notifier.subscribe("one-more", { subject: "late" }, device(0)); // room again
    notifier.close();
  } finally {
    await store.close();
  }
});
