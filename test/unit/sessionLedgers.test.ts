// The session ledgers remember which upstream sessions an instance holds, so that after a crash the
// next start closes what the dead process left: the file ledger (one process per store file) and
// the Redis ledger (leftovers = the sets of instances whose lease is gone), on real files and Redis (this file's own redis-server; skipped, saying why, without one).

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { connectRedis } from "../../src/cluster/redisConnection.js";
import { createLogger } from "../../src/observability/logger.js";
import { FileSessionLedger } from "../../src/upstream/fileSessionLedger.js";
import { RedisSessionLedger } from "../../src/upstream/redisSessionLedger.js";
import { needsRedis, testRedisUrl } from "../support/redisServer.js";
import { eventually } from "../support/waiting.js";

const log = createLogger("silent");
const url = await testRedisUrl();

describe("FileSessionLedger", () => {
  const dirs: string[] = [];
  after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  it("a new process takes what the previous one still held, and starts over", async () => {
    const dir = await mkdtemp(join(tmpdir(), "taskgate-ledger-"));
    dirs.push(dir);
    const file = join(dir, "tasks.json.sessions");
    const first = new FileSessionLedger(file, log);
    first.add("s1");
    first.add("s2");
    first.add("s3");
    first.remove("s2");
    await first.close(); // (a crash would simply stop here)
    const next = new FileSessionLedger(file, log);
    assert.deepEqual((await next.takeLeftovers()).sort(), ["s1", "s3"]);
    assert.equal(await readFile(file, "utf8"), "", "taken leftovers are forgotten");
    assert.deepEqual(await next.takeLeftovers(), []);
    next.add("mine");
    assert.deepEqual(await next.takeLeftovers(), [], "a later look never takes this process's own sessions");
    await next.close();
  });

  it("no file yet: no leftovers", async () => {
    const dir = await mkdtemp(join(tmpdir(), "taskgate-ledger-"));
    dirs.push(dir);
    assert.deepEqual(await new FileSessionLedger(join(dir, "none.sessions"), log).takeLeftovers(), []);
  });
});

describe("RedisSessionLedger", needsRedis, () => {
  const prefix = `taskgate-test-ledger-${randomUUID()}`;
  const open = (instanceId: string) => RedisSessionLedger.open({ connect: () => connectRedis({ url }) as never, prefix, instanceId, log });

  it("leftovers are the sessions of instances that are gone; live instances and this one keep theirs", async () => {
    const dead = await open("dead");
    const alive = await open("alive");
    const self = await open("self");
    dead.add("d1");
    dead.add("d2");
    alive.add("a1");
    self.add("me1");
    const checker = await connectRedis({ url });
    const members = async () => {
      let count = 0;
      for (const key of await checker.keys(`${prefix}:*`)) count += await checker.sCard(key);
      return count;
    };
    // add() is fire-and-forget: wait until Redis holds all four.
    await eventually(async () => (await members()) === 4, "the four added sessions are in Redis");
    const leftovers = await self.takeLeftovers(async (id) => id === "alive");
    assert.deepEqual(leftovers.sort(), ["d1", "d2"]);
    assert.deepEqual(await self.takeLeftovers(async (id) => id === "alive"), [], "taken once");
    await Promise.all([dead.close(), alive.close(), self.close()]);
    try {
      assert.equal((await checker.keys(`${prefix}:*`)).length, 0, "every set is gone after close");
    } finally {
      await checker.close();
    }
  });

  it("a fleet backend's sessions are its own: one backend's leftovers are never another's", async () => {
    const dead = await open("dead-fleet");
    const self = await open("self-fleet");
    dead.scoped("files").add("f1");
    dead.scoped("web").add("w1");
    dead.add("single1");
    await new Promise((resolve) => setTimeout(resolve, 100)); // the commands are fire-and-forget
    const gone = async () => false;
    assert.deepEqual(await self.scoped("files").takeLeftovers(gone), ["f1"]);
    assert.deepEqual(await self.scoped("web").takeLeftovers(gone), ["w1"]);
    assert.deepEqual(await self.takeLeftovers(gone), ["single1"]);
    await Promise.all([dead.close(), self.close()]);
  });
});
